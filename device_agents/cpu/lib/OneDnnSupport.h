//===- OneDnnSupport.h - what the oneDNN kernel sites share ---------------===//
//
// This file declares the pieces every oneDNN call site of OneDnnKernels
// uses: the engine, the calling thread's stream and scratch memory, the
// parameters of the current call, and weights kept reordered per parameter.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/functional/function_ref.h"

#include <dnnl.hpp>

#include <array>
#include <atomic>
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

/// At least `bytes` of the calling thread's scratch area (grown to its
/// largest call, reused; 4 KiB-aligned): valid until the thread's next
/// request. std::bad_alloc when it cannot grow.
void *scratchArea(size_t bytes);

/// `N` 4 KiB-aligned pieces of at least the given sizes from scratchArea:
/// no allocation on a call as large as an earlier one.
template <size_t N>
std::array<void *, N> scratch(const std::array<size_t, N> &sizes) {
  auto rounded = [](size_t size) { return (size + 4095) / 4096 * 4096; };
  size_t total = 0;
  for (size_t size : sizes)
    total += rounded(size);
  char *next = static_cast<char *>(scratchArea(total));
  std::array<void *, N> pieces;
  for (size_t i = 0; i < N; ++i) {
    pieces[i] = next;
    next += rounded(sizes[i]);
  }
  return pieces;
}

/// Runs `primitive` (a site's oneDNN path) unless the site has `failed`;
/// false when it did not run, and the caller computes the call with its
/// direct loop. Nothing may unwind into the generated code that called the
/// site: a oneDNN error marks the site `failed` for good, any other
/// exception (an allocation) sends only this call to the loop. `what`
/// names the kind of site in the warning.
bool runOrFallBack(std::atomic<bool> &failed, const char *what,
                   absl::FunctionRef<void()> primitive);

/// Sets the parameters of the call the calling thread makes
/// (OneDnnKernels::CallParameters).
void setCallParameters(std::span<void *const> pointers,
                       std::span<const uint64_t> serials);

/// The serial of the call's parameter at `data`, or 0 when `data` is not
/// one the caller named (an activation, or a call without serials).
uint64_t parameterSerial(const void *data);

/// `memory` wrapping `data` without copying (nullptr: no buffer yet; point
/// it at one with set_data_handle).
dnnl::memory wrap(const dnnl::memory::desc &desc, const void *data);

/// A 64-byte-aligned buffer of at least `bytes`, freed with the last
/// owner. std::bad_alloc when there is no memory.
std::shared_ptr<void> alignedBuffer(size_t bytes);

/// A new aligned buffer holding `data` (layout `from`) reordered into `to`
/// by `reorder`, run to completion on `stream`.
std::shared_ptr<void> reorderedCopy(const dnnl::reorder &reorder,
                                    const dnnl::memory::desc &from,
                                    const dnnl::memory::desc &to,
                                    const void *data, dnnl::stream &stream);

/// Objects a site keeps for its calls to reuse, one per call in flight
/// (concurrent calls take different ones): the dnnl::memory objects of a
/// call, made once and pointed at each call's buffers instead of made per
/// call (their allocations were ~4 % of mobilenet_v3_small's run).
template <typename T> class ReusePool {
public:
  /// Gives its object back to the pool when it goes.
  class Lease {
  public:
    Lease(ReusePool &pool, std::unique_ptr<T> item)
        : pool(pool), item(std::move(item)) {}
    Lease(const Lease &) = delete;
    Lease &operator=(const Lease &) = delete;
    ~Lease() { pool.giveBack(std::move(item)); }
    T &operator*() const { return *item; }
    T *operator->() const { return item.get(); }

  private:
    ReusePool &pool;
    std::unique_ptr<T> item;
  };

  /// An idle object, or a new one from `make()` when none is idle.
  template <typename Make> Lease take(Make make) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!idle.empty()) {
        std::unique_ptr<T> item = std::move(idle.back());
        idle.pop_back();
        return Lease(*this, std::move(item));
      }
    }
    return Lease(*this, make());
  }

private:
  void giveBack(std::unique_ptr<T> item) {
    std::lock_guard<std::mutex> lock(mutex);
    idle.push_back(std::move(item));
  }

  std::mutex mutex;
  std::vector<std::unique_ptr<T>> idle; // guarded by mutex
};

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
