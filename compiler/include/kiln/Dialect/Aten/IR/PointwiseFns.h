//===- PointwiseFns.h - the table behind aten.pointwise -------------------===//
//
// This file declares the signature table of `aten.pointwise` functions: how
// many tensor operands and number arguments each takes and what element kind
// its result has. The verifier checks ops against it; the lowering keeps its
// own name -> scalar-body table for the same names.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace kiln::aten {

/// What the result element type of a pointwise function may be.
enum class PointwiseResult {
  Any,   ///< Any element type (the promoted type of the operands).
  Float, ///< A floating-point type.
  Bool,  ///< i1.
};

/// One row of the table.
struct PointwiseFn {
  llvm::StringLiteral name;
  unsigned arity;      ///< Tensor operands.
  unsigned numScalars; ///< Entries of the `scalars` attribute.
  PointwiseResult result;
};

/// Every pointwise function, in table order.
llvm::ArrayRef<PointwiseFn> pointwiseFns();

/// The row named `name`, or null.
const PointwiseFn *lookupPointwiseFn(llvm::StringRef name);

} // namespace kiln::aten
