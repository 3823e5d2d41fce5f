//===- FractionalPoolHandlers.cpp - fractional max pooling ----------------===//
//
// This file implements the importer handlers of fractional_max_pool2d and
// fractional_max_pool3d: one aten.fractional_max_pool each, over the last 2
// or 3 dims, whose samples follow the pooled dims' order (2d's samples are
// (w, h), so they are flipped). kiln-decompose-aten computes it
// (lib/Transforms/DecomposeFractionalMaxPool.cpp).
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// fractional_max_pool{2,3}d(self, kernel_size, output_size, random_samples)
/// -> (output, indices).
absl::StatusOr<Values> fractionalMaxPool(NodeImporter &n, int64_t pooled) {
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value samples, n.tensor("random_samples"));
  ASSIGN_OR_RETURN(std::vector<int64_t> kernel, n.intsAttr("kernel_size"));
  ASSIGN_OR_RETURN(std::vector<int64_t> outputSize, n.intsAttr("output_size"));
  RankedTensorType in = typeOf(self);
  Type element = in.getElementType();
  std::string name = absl::StrCat("fractional_max_pool", pooled, "d");
  if (!isa<FloatType>(element))
    return n.error(absl::StrCat(name, " pools floating-point tensors"));
  if (in.getRank() != pooled + 1 && in.getRank() != pooled + 2)
    return n.error(absl::StrCat(name, " takes a ", pooled + 1, "-d or ", pooled + 2,
                                "-d (batched) input, not ", in.getRank(), "-d"));
  if (kernel.size() != static_cast<size_t>(pooled) ||
      outputSize.size() != static_cast<size_t>(pooled))
    return n.error(absl::StrCat(name, " takes ", pooled, " kernel sizes and ", pooled,
                                " output sizes"));
  ArrayRef<int64_t> shape = in.getShape();
  for (int64_t d = 0; d < pooled; ++d) {
    int64_t size = shape[shape.size() - pooled + d];
    if (kernel[d] < 1 || outputSize[d] < 1)
      return n.error(absl::StrCat(name, "'s kernel and output sizes must be positive"));
    if (outputSize[d] + kernel[d] - 1 > size)
      return n.error(absl::StrCat(name, ": an output of ", outputSize[d], " with a kernel of ",
                                  kernel[d], " does not fit an input of ", size,
                                  " (pooled dim ", d, ")"));
  }
  // Eager's samples are (N, C, pooled), N = 1 for an unbatched input.
  int64_t batch = in.getRank() == pooled + 2 ? shape[0] : 1;
  int64_t channels = shape[shape.size() - pooled - 1];
  RankedTensorType sampleType = typeOf(samples);
  if (sampleType.getShape() != ArrayRef<int64_t>{batch, channels, pooled} ||
      sampleType.getElementType() != element)
    return n.error(absl::StrCat(name, "'s random_samples must be (", batch, ", ", channels,
                                ", ", pooled, ") of the input's dtype, not (",
                                absl::StrJoin(sampleType.getShape(), ", "), ")"));
  SmallVector<int64_t> lead(shape.drop_back(pooled));
  lead.push_back(pooled);
  samples = viewValue(n, samples, lead);
  if (pooled == 2) // (w, h) -> (h, w)
    samples = n.b().create<aten::FlipOp>(n.loc(), samples,
                                         n.b().getDenseI64ArrayAttr({typeOf(samples).getRank() - 1}));
  ASSIGN_OR_RETURN(RankedTensorType valuesType, n.resultType(0));
  SmallVector<int64_t> expected(shape.drop_back(pooled));
  expected.append(outputSize.begin(), outputSize.end());
  if (valuesType.getShape() != ArrayRef<int64_t>(expected))
    return n.error(absl::StrCat("the output is declared (", absl::StrJoin(valuesType.getShape(), ", "),
                                "), not (", absl::StrJoin(expected, ", "), ")"));
  auto indicesType = RankedTensorType::get(valuesType.getShape(), n.b().getI64Type());
  auto op = n.b().create<aten::FractionalMaxPoolOp>(
      n.loc(), TypeRange{valuesType, indicesType}, self, samples,
      n.b().getDenseI64ArrayAttr(kernel));
  return Values(op->getResults());
}

} // namespace

void addFractionalPoolHandlers(OpHandlerTable &t) {
  t["aten.fractional_max_pool2d.default"] = [](NodeImporter &n) {
    return fractionalMaxPool(n, 2);
  };
  t["aten.fractional_max_pool3d.default"] = [](NodeImporter &n) {
    return fractionalMaxPool(n, 3);
  };
}

} // namespace kiln
