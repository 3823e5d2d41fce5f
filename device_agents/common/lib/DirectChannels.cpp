//===- DirectChannels.cpp - a co-located client's calls, without kilnd ----===//
//
// This file implements DirectChannels: a thread per channel reads a frame,
// checks it, runs it as the bound task and answers.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/DirectChannels.h"

#include "kiln/agent/OutputFiles.h"
#include "kiln/common/FrameFiles.h"
#include "kiln/common/Logging.h"
#include "kiln/common/Status.h"
#include "kiln/common/TensorTypes.h"

#include "absl/strings/str_cat.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include <sys/socket.h>

namespace kiln::agent {

namespace {

using Clock = std::chrono::steady_clock;

v1::LocalReply failure(const absl::Status &status) {
  v1::LocalReply reply;
  reply.set_code(static_cast<int32_t>(status.code()));
  reply.set_message(std::string(status.message()));
  return reply;
}

/// What a call may carry: inputs only (its executable and parameters are
/// the channel's), inline or in files.
absl::Status checkCall(const v1::LocalExecute &call) {
  const v1::ExecuteRequest &request = call.request();
  if (request.has_executable() || request.parameters_size() != 0 ||
      request.has_parameter_set() || request.keep_outputs_size() != 0 ||
      request.release_size() != 0)
    return absl::InvalidArgumentError(
        "a direct channel runs the executable with the parameters kilnd "
        "bound it to, and keeps no outputs: a call names only its inputs");
  for (int i = 0; i < request.inputs_size(); ++i) {
    v1::Tensor::PayloadCase payload = request.inputs(i).payload_case();
    if (payload == v1::Tensor::kBlob || payload == v1::Tensor::kHeld)
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, ": a direct channel takes inputs inline or in sealed "
          "memfds, not blobs or held tensors (send such calls to kilnd)"));
  }
  return absl::OkStatus();
}

} // namespace

std::chrono::microseconds nextPollWindow(const DirectPoll &poll,
                                         std::chrono::microseconds current,
                                         std::chrono::microseconds gap) {
  if (poll.cap <= poll.window || gap > poll.cap)
    return poll.window;
  std::chrono::microseconds wanted = 2 * gap;
  std::chrono::microseconds next =
      wanted >= current ? wanted : std::max(wanted, current - current / 4);
  return std::clamp(next, poll.window, poll.cap);
}

DirectChannels::DirectChannels(TaskRunner &runner,
                               std::counting_semaphore<> *runSlots,
                               size_t limit,
                               DirectPoll poll)
    : runner(runner), runSlots(runSlots), limit(limit), poll(poll) {}

bool DirectChannels::takePollTurn() {
  if (poll.window.count() <= 0)
    return false;
  if (polling.fetch_add(1) < poll.pollers)
    return true;
  polling.fetch_sub(1);
  return false;
}

DirectChannels::~DirectChannels() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
    for (Channel &channel : channels)
      channel.socket->shutdown();
  }
  // No channel is added now.
  for (Channel &channel : channels)
    channel.thread.join();
}

void DirectChannels::reap() {
  for (auto it = channels.begin(); it != channels.end();) {
    if (!it->done.load()) {
      ++it;
      continue;
    }
    it->thread.join();
    it = channels.erase(it);
  }
}

size_t DirectChannels::openCount() {
  std::lock_guard<std::mutex> lock(mutex);
  reap();
  return channels.size();
}

bool DirectChannels::open(UniqueFd socket, const v1::Task &binding,
                          std::shared_ptr<const v1::ExecutableRecord> record) {
  std::lock_guard<std::mutex> lock(mutex);
  reap();
  if (stopping || channels.size() >= limit || !record)
    return false;
  v1::Task task = binding;
  task.clear_inputs();
  task.clear_task_id();
  task.clear_request_id();
  task.clear_keep_outputs();
  task.clear_release();
  uint64_t id = nextId.fetch_add(1);
  Channel &channel = channels.emplace_back();
  channel.socket = std::make_unique<FramedSocket>(std::move(socket));
  channel.thread = std::thread(
      [this, &channel, task = std::move(task), record = std::move(record),
       id]() mutable {
        serve(*channel.socket, std::move(task), *record, id);
        channel.socket->shutdown();
        channel.done = true;
      });
  spdlog::debug("direct channel {} open for executable {} on {}", id,
                binding.executable().hash(), binding.device_id());
  return true;
}

void DirectChannels::serve(FramedSocket &socket, v1::Task task,
                           const v1::ExecutableRecord &record, uint64_t id) {
  socket.limitFrames(kMaxCallFrameBytes, FramedSocket::kMaxFiles);
  timeval sendLimit{static_cast<time_t>(kReplyTimeout.count()), 0};
  ::setsockopt(socket.fd(), SOL_SOCKET, SO_SNDTIMEO, &sendLimit,
               sizeof sendLimit);
  std::string bytes;
  std::vector<UniqueFd> files;
  v1::LocalClientFrame frame;
  std::optional<ExchangeBuffer> exchange;
  uint64_t calls = 0;
  bool pollNext = false; // holding a poll turn
  // This channel's window, adapted to its client's pace (nextPollWindow).
  std::chrono::microseconds window = poll.window;
  std::optional<Clock::time_point> answeredAt; // of the last call that ran
  while (true) {
    // A client calling in a loop sends its next call soon after the
    // answer: polled for, it is read without waking this thread. Only
    // after a call that ran, so a client's refused or cheap frames do not
    // buy polling.
    if (pollNext) {
      socket.pollReadable(window);
      endPollTurn();
      pollNext = false;
    }
    socket.setReceiveDeadline(Clock::now() + kIdleTimeout);
    if (!socket.receive(bytes, files).ok())
      break; // closed by the client, idle, or a malformed frame
    if (answeredAt) {
      window = nextPollWindow(
          poll, window,
          std::chrono::duration_cast<std::chrono::microseconds>(
              Clock::now() - *answeredAt));
      answeredAt.reset();
    }
    if (!frame.ParseFromString(bytes) ||
        (!frame.has_execute() && !frame.has_exchange())) {
      v1::LocalReply refused = failure(absl::InvalidArgumentError(
          "a direct channel takes LocalExecute frames and LocalExchange "
          "frames (kiln.v1.LocalClientFrame.execute, .exchange)"));
      std::string out;
      if (refused.SerializeToString(&out))
        (void)socket.send(out);
      break;
    }
    if (frame.has_exchange()) {
      v1::LocalReply answer = exchangeBuffer(frame.exchange(), files, exchange);
      files.clear();
      std::string out;
      std::vector<int> answerFiles;
      if (exchange && answer.code() == 0)
        answerFiles.push_back(exchange->file());
      if (!answer.SerializeToString(&out) || !socket.send(out, answerFiles).ok())
        break;
      continue;
    }
    ++calls;
    std::string requestId = frame.execute().request_id().empty()
                                ? absl::StrCat("direct-", id, "-", calls)
                                : frame.execute().request_id();
    ScopedRequestId logContext(requestId);
    task.set_task_id(absl::StrCat("direct-", id, "-", calls));
    task.set_request_id(requestId);
    // Dropped after the reply: unmapping inputs the compute threads touched
    // flushes their TLBs, which should not delay the answer.
    LocalFiles tensors;
    std::vector<int> replyFiles;
    v1::LocalReply reply =
        call(task, record, *frame.mutable_execute(), files,
             exchange ? &*exchange : nullptr, tensors, replyFiles);
    files.clear();
    pollNext = reply.code() == 0 && takePollTurn();
    if (pollNext)
      reply.set_poll_us(static_cast<uint32_t>(window.count()));
    std::string out;
    absl::Status sent = reply.SerializeToString(&out)
                            ? socket.send(out, replyFiles)
                            : absl::InternalError("the reply does not serialize");
    if (!sent.ok()) {
      spdlog::debug("direct channel {}: reply not sent: {}", id,
                    std::string(sent.message()));
      break;
    }
    if (reply.code() == 0)
      answeredAt = Clock::now();
  }
  if (pollNext)
    endPollTurn();
  spdlog::debug("direct channel {} closed after {} calls", id, calls);
}

absl::Status DirectChannels::takeExchangeInputs(const v1::LocalExecute &call,
                                const ExchangeBuffer *exchange,
                                const v1::ExecutableManifest &manifest,
                                LocalFiles &tensors) {
  if (call.exchange_inputs_size() == 0 && call.exchange_output_bytes() == 0)
    return absl::OkStatus();
  if (!exchange)
    return absl::InvalidArgumentError(
        "the call uses an exchange buffer, and this channel has none (ask "
        "for one with LocalClientFrame.exchange)");
  if (!exchange->holds(call.exchange_output_offset(),
                       call.exchange_output_bytes()))
    return absl::InvalidArgumentError(absl::StrCat(
        "the output region (", call.exchange_output_bytes(),
        " bytes at offset ", call.exchange_output_offset(),
        ") is not inside the channel's exchange buffer of ", exchange->size(),
        " bytes"));
  const v1::ExecuteRequest &request = call.request();
  if (request.inputs_size() != manifest.inputs_size())
    return absl::InvalidArgumentError(
        absl::StrCat("the call has ", request.inputs_size(),
                     " inputs, the executable takes ", manifest.inputs_size()));
  int64_t previous = -1;
  uint64_t previousEnd = 0;
  for (const v1::ExchangeSlice &slice : call.exchange_inputs()) {
    int64_t index = slice.index();
    if (index <= previous || index >= request.inputs_size())
      return absl::InvalidArgumentError(absl::StrCat(
          "exchange input ", index, ": indices must ascend and name one of "
          "the call's ", request.inputs_size(), " inputs"));
    previous = index;
    std::string where = absl::StrCat("input ", index);
    const v1::Tensor &input = request.inputs(static_cast<int>(index));
    if (input.payload_case() != v1::Tensor::PAYLOAD_NOT_SET)
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": it is in the exchange buffer, and it has a payload too"));
    for (const auto &[fileIndex, file] : tensors.inputs)
      if (fileIndex == index)
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": it is in the exchange buffer, and in a file too"));
    absl::StatusOr<int64_t> size = byteSize(input.type());
    if (!size.ok())
      return annotate(size.status(), where);
    if (slice.offset() < previousEnd)
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": it starts at offset ", slice.offset(), ", inside the input "
          "before it in the exchange buffer (slices ascend without overlap)"));
    absl::StatusOr<AlignedBuffer> copy = exchange->copyOut(slice.offset(), *size);
    if (!copy.ok())
      return annotate(copy.status(), where);
    previousEnd = slice.offset() + static_cast<uint64_t>(*size); // inside
    tensors.inputCopies.emplace_back(static_cast<int>(index), *std::move(copy));
  }
  return absl::OkStatus();
}

v1::LocalReply
DirectChannels::exchangeBuffer(const v1::LocalExchange &ask,
                               const std::vector<UniqueFd> &files,
                               std::optional<ExchangeBuffer> &exchange) {
  if (!files.empty())
    return failure(absl::InvalidArgumentError(
        "a LocalExchange frame carries no files"));
  // Replaced, or none after a refusal; the client's mapping keeps the old
  // one alive as long as it needs it.
  exchange.reset();
  absl::StatusOr<ExchangeBuffer> made = ExchangeBuffer::create(ask.size_bytes());
  if (!made.ok())
    return failure(made.status());
  exchange = *std::move(made);
  v1::LocalReply answer;
  answer.set_exchange_bytes(exchange->size());
  return answer;
}

v1::LocalReply DirectChannels::call(v1::Task &task,
                                    const v1::ExecutableRecord &record,
                                    v1::LocalExecute &execute,
                                    std::vector<UniqueFd> &files,
                                    ExchangeBuffer *exchange,
                                    LocalFiles &tensors,
                                    std::vector<int> &replyFiles) {
  Clock::time_point start = Clock::now();
  if (absl::Status checked = checkCall(execute); !checked.ok())
    return failure(checked);
  absl::StatusOr<IndexedFiles> paired = pairFrameFiles(
      execute.file_inputs(), execute.request().inputs_size(), files);
  if (!paired.ok())
    return failure(paired.status());
  for (const auto &[index, file] : *paired)
    if (execute.request().inputs(index).payload_case() !=
        v1::Tensor::PAYLOAD_NOT_SET)
      return failure(absl::InvalidArgumentError(absl::StrCat(
          "input ", index, ": a file was passed for it, and it has a "
          "payload too")));
  tensors.inputs = *std::move(paired);
  if (absl::Status taken =
          takeExchangeInputs(execute, exchange, record.manifest(), tensors);
      !taken.ok())
    return failure(taken);
  tensors.outputsAsFiles = true;
  tensors.callerMapsOutputs = true;
  // With a region of the exchange buffer for them, outputs under
  // ExchangeBuffer::kMaxTensorBytes are copied there where they fit (where
  // a memfd per output costs its creation, mapping and page faults on both
  // sides); larger ones stay in memfds.
  if (execute.exchange_output_bytes() != 0) {
    tensors.exchange = exchange; // takeExchangeInputs checked the region
    tensors.exchangeBegin = execute.exchange_output_offset();
    tensors.exchangeEnd =
        execute.exchange_output_offset() + execute.exchange_output_bytes();
  }
  task.mutable_inputs()->Swap(execute.mutable_request()->mutable_inputs());
  v1::TaskResult result;
  {
    RunSlot slot(runSlots);
    result = runner.run(task, record, &tensors);
  }
  task.clear_inputs();
  v1::LocalReply reply;
  sealOutputFiles(tensors, result, *reply.mutable_file_outputs(), replyFiles);
  if (result.code() != 0) {
    reply.clear_file_outputs();
    replyFiles.clear();
    reply.set_code(result.code());
    reply.set_message(result.message());
    spdlog::warn("direct call {} failed: {}", task.task_id(), result.message());
    return reply;
  }
  v1::ExecuteResponse &response = *reply.mutable_response();
  response.mutable_outputs()->Swap(result.mutable_outputs());
  for (const auto &[index, offset] : tensors.exchangeOutputs) {
    v1::ExchangeSlice &slice = *reply.add_exchange_outputs();
    slice.set_index(static_cast<uint32_t>(index));
    slice.set_offset(offset);
  }
  response.set_device_id(task.device_id());
  *response.mutable_counters() = std::move(*result.mutable_counters());
  v1::Timings &timings = *response.mutable_timings();
  timings = std::move(*result.mutable_timings());
  timings.set_total_us(std::chrono::duration_cast<std::chrono::microseconds>(
                           Clock::now() - start)
                           .count());
  return reply;
}

} // namespace kiln::agent
