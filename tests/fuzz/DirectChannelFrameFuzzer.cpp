//===- DirectChannelFrameFuzzer.cpp - fuzz a direct channel's frames -------===//
//
// libFuzzer target: bytes as a LocalClientFrame, what a co-located client
// sends on a direct channel to the agent. An exchange request goes through
// ExchangeBuffer::create (sizes up to 1 MiB here, to bound the fuzzer's
// memory). A call's exchange slices go through the agent's checks and
// copies against a 64 KiB buffer and a manifest of three inputs, then its
// output region through the placement dry run: whatever the frame, the
// bytes copied and reserved stay inside the buffer, or the process traps.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/DirectChannels.h"

#include <cstddef>
#include <cstdint>

namespace {

using kiln::agent::ExchangeBuffer;

ExchangeBuffer &buffer() {
  static ExchangeBuffer *made = [] {
    absl::StatusOr<ExchangeBuffer> created = ExchangeBuffer::create(64 << 10);
    if (!created.ok())
      __builtin_trap();
    return new ExchangeBuffer(*std::move(created));
  }();
  return *made;
}

const kiln::v1::ExecutableManifest &manifest() {
  static const kiln::v1::ExecutableManifest *made = [] {
    auto *m = new kiln::v1::ExecutableManifest;
    for (auto [dtype, shape] :
         {std::pair{kiln::v1::DTYPE_F32, std::vector<int64_t>{16}},
          std::pair{kiln::v1::DTYPE_I64, std::vector<int64_t>{4}},
          std::pair{kiln::v1::DTYPE_F32, std::vector<int64_t>{2, 8}}}) {
      kiln::v1::TensorType &type = *m->add_inputs()->mutable_type();
      type.set_dtype(dtype);
      for (int64_t d : shape)
        type.add_shape(d);
    }
    return m;
  }();
  return *made;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::v1::LocalClientFrame frame;
  if (!frame.ParseFromArray(data, static_cast<int>(size)))
    return 0;
  if (frame.has_exchange()) {
    if (frame.exchange().size_bytes() <= (uint64_t{1} << 20))
      (void)ExchangeBuffer::create(frame.exchange().size_bytes());
    return 0;
  }
  if (!frame.has_execute())
    return 0;
  const kiln::v1::LocalExecute &call = frame.execute();
  kiln::agent::LocalFiles tensors;
  absl::Status taken = kiln::agent::DirectChannels::takeExchangeInputs(
      call, &buffer(), manifest(), tensors);
  uint64_t copied = 0;
  for (const auto &[index, copy] : tensors.inputCopies)
    copied += static_cast<uint64_t>(copy.size());
  if (copied > buffer().size())
    __builtin_trap();
  if (!taken.ok() || call.exchange_output_bytes() == 0)
    return 0;
  // The region was checked: reservations from it never leave it.
  uint64_t cursor = call.exchange_output_offset();
  uint64_t end = call.exchange_output_offset() + call.exchange_output_bytes();
  for (uint64_t want : {uint64_t{1}, uint64_t{100}, uint64_t{4096},
                        uint64_t{1} << 16, uint64_t{1} << 40}) {
    std::optional<uint64_t> at = buffer().reserve(want, cursor, end);
    if (at && (*at + want > end || end > buffer().size() || *at % 64 != 0))
      __builtin_trap();
  }
  return 0;
}
