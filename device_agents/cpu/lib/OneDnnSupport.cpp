//===- OneDnnSupport.cpp - what the oneDNN kernel sites share -------------===//
//
// This file implements the engine, per-thread streams and scratch areas, the
// current call's parameters and PrepackedWeights.
//
//===----------------------------------------------------------------------===//
#include "OneDnnSupport.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <new>

// The OpenMP runtime oneDNN runs on (GNU libgomp); clang here ships no
// omp.h, and this is the one OpenMP routine the agent calls.
extern "C" void omp_set_num_threads(int threads);

namespace kiln::agent::onednn {
namespace {

/// A per-thread scratch area: the reordered tensors and oneDNN's
/// scratchpad of one call, grown to the largest call the thread made.
class ScratchArena {
public:
  ~ScratchArena() { std::free(base); }

  void *reserve(size_t bytes) {
    if (bytes > capacity) {
      std::free(base);
      base = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
      capacity = base ? bytes : 0;
      if (!base)
        throw std::bad_alloc();
    }
    return base;
  }

private:
  void *base = nullptr;
  size_t capacity = 0;
};

thread_local ScratchArena arena;
thread_local std::span<void *const> callParameters;
thread_local std::span<const uint64_t> callParameterSerials;

} // namespace

dnnl::engine &engine() {
  static dnnl::engine cpu(dnnl::engine::kind::cpu, 0);
  return cpu;
}

dnnl::stream &threadStream(int threads) {
  // oneDNN sizes its parallel regions by the calling thread's OpenMP
  // setting.
  omp_set_num_threads(threads);
  thread_local dnnl::stream stream(engine());
  return stream;
}

void *scratchArea(size_t bytes) { return arena.reserve(bytes); }

bool runOrFallBack(std::atomic<bool> &failed, const char *what,
                   absl::FunctionRef<void()> primitive) {
  if (failed.load(std::memory_order_relaxed))
    return false;
  try {
    primitive();
    return true;
  } catch (const dnnl::error &error) {
    spdlog::warn("oneDNN {} failed ({}); the call site runs a direct loop",
                 what, error.what());
    failed = true;
  } catch (const std::exception &error) {
    spdlog::warn("oneDNN {} could not run ({}); running a direct loop", what,
                 error.what());
  }
  return false;
}

void setCallParameters(std::span<void *const> pointers,
                       std::span<const uint64_t> serials) {
  callParameters = pointers;
  callParameterSerials = serials;
}

uint64_t parameterSerial(const void *data) {
  if (callParameterSerials.size() != callParameters.size())
    return 0;
  for (size_t i = 0; i < callParameters.size(); ++i)
    if (callParameters[i] == data)
      return callParameterSerials[i];
  return 0;
}

dnnl::memory wrap(const dnnl::memory::desc &desc, const void *data) {
  return dnnl::memory(desc, engine(), const_cast<void *>(data));
}

std::shared_ptr<void> alignedBuffer(size_t bytes) {
  std::shared_ptr<void> buffer(std::aligned_alloc(64, (bytes + 63) / 64 * 64),
                               &std::free);
  if (!buffer)
    throw std::bad_alloc();
  return buffer;
}

std::shared_ptr<void> reorderedCopy(const dnnl::reorder &reorder,
                                    const dnnl::memory::desc &from,
                                    const dnnl::memory::desc &to,
                                    const void *data, dnnl::stream &stream) {
  std::shared_ptr<void> copy = alignedBuffer(to.get_size());
  dnnl::memory source = wrap(from, data), target = wrap(to, copy.get());
  reorder.execute(stream, source, target);
  stream.wait();
  return copy;
}

std::shared_ptr<void> PrepackedWeights::get(uint64_t serial,
                                            const dnnl::reorder &reorder,
                                            const dnnl::memory::desc &from,
                                            const dnnl::memory::desc &to,
                                            const void *weights,
                                            dnnl::stream &stream) {
  std::lock_guard<std::mutex> lock(mutex);
  if (packed && packedSerial == serial)
    return packed;
  packed = reorderedCopy(reorder, from, to, weights, stream);
  packedSerial = serial;
  return packed;
}

} // namespace kiln::agent::onednn
