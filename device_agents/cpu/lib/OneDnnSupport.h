//===- OneDnnSupport.h - what the oneDNN kernel sites share ---------------===//
//
// This file declares the pieces every oneDNN call site of OneDnnKernels
// uses: the engine, the calling thread's stream and scratch memory, the
// parameters of the current call, and weights kept reordered per parameter.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <dnnl.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace kiln::agent::onednn {

/// One call site of a loaded artifact (a convolution, a matmul).
class KernelSite {
public:
  virtual ~KernelSite() = default;
};

dnnl::engine &engine();

/// The calling thread's stream, with oneDNN's parallel regions sized to
/// `threads` (the agent's compute threads) for this thread's next calls.
dnnl::stream &threadStream(int threads);

/// `sizes.size()` 64-byte-aligned pieces of at least the given sizes, from
/// the calling thread's scratch area (grown to its largest call, reused):
/// valid until the thread's next request.
std::vector<void *> scratch(const std::vector<size_t> &sizes);

/// Sets the parameters of the call the calling thread makes
/// (OneDnnKernels::CallParameters).
void setCallParameters(std::span<void *const> pointers,
                       std::span<const uint64_t> serials);

/// The serial of the call's parameter at `data`, or 0 when `data` is not
/// one the caller named (an activation, or a call without serials).
uint64_t parameterSerial(const void *data);

/// `memory` wrapping `data` without copying.
dnnl::memory wrap(const dnnl::memory::desc &desc, const void *data);

/// A site's weights in the layout its primitive chose, reordered once per
/// parameter serial and kept while the site is called with that parameter.
class PrepackedWeights {
public:
  /// The reordered copy of `weights` (parameter `serial`), made with
  /// `reorder` from `from` into `to` when the kept one is of another serial.
  std::shared_ptr<void> get(uint64_t serial, const dnnl::reorder &reorder,
                            const dnnl::memory::desc &from,
                            const dnnl::memory::desc &to, const void *weights,
                            dnnl::stream &stream);

private:
  std::mutex mutex;
  std::shared_ptr<void> packed; // guarded by mutex
  uint64_t packedSerial = 0;    // guarded by mutex
};

} // namespace kiln::agent::onednn
