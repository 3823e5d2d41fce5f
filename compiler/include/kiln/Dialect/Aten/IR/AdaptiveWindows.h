//===- AdaptiveWindows.h - PyTorch's adaptive pooling windows -------------===//
//
// This file declares the windows of aten.adaptive_avg_pool and
// aten.adaptive_max_pool along one dim, shared by their verifiers, the
// importer (which refuses tables past the limit as UNIMPLEMENTED), their
// decomposition and their cost.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/Dialect/Aten/IR/Limits.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdint>

namespace kiln::aten {

/// Output element i of a dim of `in` pooled to `out` (both at least 1)
/// pools PyTorch's window [floor(i * in / out), ceil((i + 1) * in / out)).
struct AdaptiveWindows {
  int64_t in = 1, out = 1;

  int64_t start(int64_t i) const {
    return static_cast<int64_t>(static_cast<__int128>(i) * in / out);
  }
  int64_t end(int64_t i) const {
    return static_cast<int64_t>(
        (static_cast<__int128>(i + 1) * in + out - 1) / out);
  }
  int64_t size(int64_t i) const { return end(i) - start(i); }
  /// Every window is in / out long and they tile the dim: a plain pool
  /// with kernel = stride = in / out.
  bool even() const { return in % out == 0; }
  /// At least the longest window: in / out + 2 (the window of in = 5 to
  /// out = 3 spans 3 elements at i = 1).
  int64_t longestBound() const { return in / out + 2; }
  /// The longest window (a walk over the out windows).
  int64_t longest() const {
    int64_t longest = 0;
    for (int64_t i = 0; i < out; ++i)
      longest = std::max(longest, size(i));
    return longest;
  }
  /// The input position of element k of window i, padded past the
  /// window's end by repeating its last element.
  int64_t at(int64_t i, int64_t k) const {
    return start(i) + std::min(k, size(i) - 1);
  }
};

/// The windows of the last `out.size()` dims of `in` pooled to `out`.
inline llvm::SmallVector<AdaptiveWindows>
adaptiveWindows(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> out) {
  llvm::SmallVector<AdaptiveWindows> windows;
  size_t lead = in.size() - out.size();
  for (size_t i = 0; i < out.size(); ++i)
    windows.push_back({in[lead + i], out[i]});
  return windows;
}

/// The kernel (= stride) of the plain pool that dividing windows are.
inline llvm::SmallVector<int64_t> adaptiveKernel(llvm::ArrayRef<AdaptiveWindows> windows) {
  llvm::SmallVector<int64_t> kernel;
  for (const AdaptiveWindows &w : windows)
    kernel.push_back(w.in / w.out);
  return kernel;
}

inline bool allEven(llvm::ArrayRef<AdaptiveWindows> windows) {
  return llvm::all_of(windows, [](const AdaptiveWindows &w) { return w.even(); });
}

/// Whether gathering `windows` (when some are uneven) keeps its constant
/// tables within kMaxConstantTable entries; always true when all are even.
inline bool adaptiveTablesFit(llvm::ArrayRef<AdaptiveWindows> windows) {
  if (allEven(windows))
    return true;
  __int128 entries = 1;
  for (const AdaptiveWindows &w : windows) {
    // The bound first: out may be huge, and longest() walks it.
    if (static_cast<__int128>(w.out) * w.longestBound() > kMaxConstantTable)
      return false;
    entries *= static_cast<__int128>(w.out) * w.longest();
    if (entries > kMaxConstantTable)
      return false;
  }
  return true;
}

} // namespace kiln::aten
