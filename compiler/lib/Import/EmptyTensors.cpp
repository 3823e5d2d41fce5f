//===- EmptyTensors.cpp - nodes over tensors with no elements -------------===//
//
// This file implements importOverEmptyTensors(): the rules by which a node
// whose arguments or results have no elements is imported from shapes
// alone, so that no generated code touches an empty buffer.
//
//===----------------------------------------------------------------------===//
#include "EmptyTensors.h"

#include "ComplexPairs.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/StringMap.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln {

using Values = SmallVector<Value>;

bool hasNoElements(RankedTensorType type) {
  return llvm::is_contained(type.getShape(), 0);
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return b
      .create<aten::ConstantOp>(loc, type,
                                DenseElementsAttr::get(type, ArrayRef<Attribute>{}))
      .getResult();
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// One value per result of `n`, made by `make` from the result's type and
/// index; null for a result the node leaves out.
absl::StatusOr<Values>
perResult(NodeImporter &n,
          llvm::function_ref<absl::StatusOr<Value>(RankedTensorType, int)> make) {
  Values results;
  for (int r = 0; r < n.numResults(); ++r) {
    if (n.resultLeftOut(r)) {
      results.push_back(Value());
      continue;
    }
    ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(r));
    ASSIGN_OR_RETURN(Value value, make(type, r));
    results.push_back(value);
  }
  return results;
}

/// Result `r` of `n` (of `type`) filled with `value`: a complex result's
/// (value, 0) pairs.
Value filledResult(NodeImporter &n, RankedTensorType type, int r, double value) {
  if (n.resultIsComplex(r)) {
    ArrayRef<int64_t> shape = type.getShape().drop_back();
    return pack(n, n.constant(type.getElementType(), value, shape),
                n.constant(type.getElementType(), 0.0, shape));
  }
  return n.constant(type.getElementType(), value, type.getShape());
}

/// Every result of `n` filled with `value` (a reduction over no elements
/// gives its identity at every position).
absl::StatusOr<Values> filled(NodeImporter &n, double value) {
  return perResult(n, [&](RankedTensorType type, int r) -> absl::StatusOr<Value> {
    if (std::isnan(value) && !isa<FloatType>(type.getElementType()))
      return n.unimplemented("a reduction over no elements is NaN, which an "
                             "integer result cannot hold");
    if (std::isnan(value))
      return n.constant(type.getElementType(), value, type.getShape());
    // A complex result's identity is real: (value, 0) pairs.
    return filledResult(n, type, r, value);
  });
}

/// What a reduction gives over no elements, as PyTorch defines it. Ops
/// without an identity (amax, argmax...) are errors in eager and get none.
std::optional<double> reductionIdentity(NodeImporter &n) {
  const std::string &op = n.opName();
  auto startsWith = [&](const char *prefix) { return op.rfind(prefix, 0) == 0; };
  if (startsWith("aten.sum.") || startsWith("aten.any."))
    return 0.0;
  if (startsWith("aten.prod.") || startsWith("aten.all."))
    return 1.0;
  if (startsWith("aten.mean.") || startsWith("aten.var.") ||
      startsWith("aten.std.") || startsWith("aten.var_mean."))
    return kNaN;
  // median()/nanmedian() of no elements (the .dim overloads refuse an
  // empty dim, as eager does).
  if (op == "aten.median.default" || op == "aten.nanmedian.default")
    return kNaN;
  // A histogram of no elements counts nothing in every bin.
  if (op == "aten.histc.default")
    return 0.0;
  if (op == "aten.linalg_vector_norm.default") {
    // (sum |x|^p)^(1/p) over nothing: 0 for p >= 0, +inf for p < 0; the
    // infinity norms have no identity (eager raises).
    auto ord = n.floatAttr("ord", 2.0);
    if (!ord.ok() || std::isinf(*ord))
      return std::nullopt;
    return *ord < 0 ? kInf : 0.0;
  }
  return std::nullopt;
}

/// mm, bmm and addmm whose contraction is empty: alpha * 0 plus, for
/// addmm, beta * self broadcast (beta = 0 ignores self, NaN included);
/// and cdist over rows of no elements: every distance 0, for every p.
absl::StatusOr<std::optional<Values>> emptyContraction(NodeImporter &n) {
  const std::string &op = n.opName();
  if (op != "aten.mm.default" && op != "aten.bmm.default" &&
      op != "aten.addmm.default" && op != "aten._cdist_forward.default")
    return std::optional<Values>();
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  Type element = type.getElementType();
  if (op != "aten.addmm.default")
    return std::optional<Values>(Values{n.constant(element, 0.0, type.getShape())});
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(double beta, n.floatAttr("beta", 1.0));
  if (hasNoElements(typeOf(self)))
    return n.unimplemented("addmm's self has no elements but its result has");
  if (beta == 0.0)
    return std::optional<Values>(Values{n.constant(element, 0.0, type.getShape())});
  Value expanded = self;
  if (typeOf(self) != type)
    expanded = n.b().create<aten::ExpandOp>(n.loc(), type, self);
  if (beta == 1.0)
    return std::optional<Values>(Values{expanded});
  Value scaled = n.b().create<aten::MulOp>(n.loc(), type, expanded,
                                           n.constant(element, beta));
  return std::optional<Values>(Values{scaled});
}

/// Factorisations, solves and determinants of matrices of order 0: the
/// factors, pivots and solutions are empty, and each matrix's info is 0
/// (success), its determinant and slogdet's sign 1 and log |det| 0, as
/// eager gives them, for real and complex matrices (a complex result's
/// value is (v, 0)). Per op, each result's value (empty results take none).
const llvm::StringMap<SmallVector<double, 4>> &orderZeroResults() {
  static const llvm::StringMap<SmallVector<double, 4>> table = {
      {"aten.linalg_ldl_factor_ex.default", {0, 0, 0}},
      {"aten.linalg_lu_factor_ex.default", {0, 0, 0}},
      {"aten.linalg_inv_ex.default", {0, 0}},
      {"aten.linalg_cholesky_ex.default", {0, 0}},
      {"aten._linalg_solve_ex.default", {0, 0, 0, 0}},
      {"aten._linalg_det.default", {1, 0, 0}},
      {"aten._linalg_slogdet.default", {1, 0, 0, 0}},
  };
  return table;
}

/// The results of a node of orderZeroResults() whose matrix argument
/// (`empty`, named A or self) is a batch of matrices of order 0; none for
/// other nodes.
absl::StatusOr<std::optional<Values>>
orderZeroMatrices(NodeImporter &n, const std::pair<std::string, Value> &empty) {
  auto found = orderZeroResults().find(n.opName());
  if (found == orderZeroResults().end() || (empty.first != "A" && empty.first != "self"))
    return std::optional<Values>();
  ArrayRef<int64_t> shape = typeOf(empty.second).getShape();
  if (n.isComplexTensor(empty.first))
    shape = shape.drop_back(); // the (real, imaginary) pairs' dim
  if (shape.size() < 2 || shape.back() != 0 || shape[shape.size() - 2] != 0)
    return std::optional<Values>();
  const SmallVector<double, 4> &values = found->second;
  if (n.numResults() != static_cast<int>(values.size()))
    return n.error(absl::StrCat("declares ", n.numResults(), " results; the op has ",
                                values.size()));
  ASSIGN_OR_RETURN(Values results,
                   perResult(n, [&](RankedTensorType type, int r) -> absl::StatusOr<Value> {
                     if (hasNoElements(type))
                       return emptyTensor(n.b(), n.loc(), type);
                     return filledResult(n, type, r, values[r]);
                   }));
  return std::optional<Values>(std::move(results));
}

/// A batch of identity matrices of `type` (..., k, k), or of complex ones
/// as (..., k, k, 2) pairs (`pairs`); none past 4M elements (a constant
/// that large would be an oversized program).
absl::StatusOr<Value> identities(NodeImporter &n, RankedTensorType type, bool pairs = false) {
  ArrayRef<int64_t> shape = type.getShape().drop_back(pairs ? 1 : 0);
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank < 2 || shape[rank - 1] != shape[rank - 2] || !isa<FloatType>(type.getElementType()))
    return n.error("a factor with elements must be a batch of square matrices");
  if (type.getNumElements() > (1 << 22))
    return n.unimplemented("an identity factor of more than 4M elements");
  const int64_t k = shape[rank - 1], parts = pairs ? 2 : 1;
  auto element = cast<FloatType>(type.getElementType());
  SmallVector<Attribute> values;
  values.reserve(type.getNumElements());
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    const bool one = i % parts == 0 && ((i / parts) % (k * k)) % (k + 1) == 0;
    values.push_back(n.b().getFloatAttr(element, one ? 1.0 : 0.0));
  }
  return n.b()
      .create<aten::ConstantOp>(n.loc(), type, DenseElementsAttr::get(type, values))
      .getResult();
}

/// svd of matrices of m x 0 or 0 x n: S is empty, and so are U and Vh but
/// where full_matrices asks for a square m x m U or n x n Vh, which is the
/// identity, as eager gives it (complex pairs for a complex A).
absl::StatusOr<std::optional<Values>> svdOfNothing(NodeImporter &n,
                                                    const std::pair<std::string, Value> &empty) {
  if (n.opName() != "aten._linalg_svd.default" || empty.first != "A")
    return std::optional<Values>();
  ASSIGN_OR_RETURN(Values results,
                   perResult(n, [&](RankedTensorType type, int r) -> absl::StatusOr<Value> {
                     if (hasNoElements(type))
                       return emptyTensor(n.b(), n.loc(), type);
                     return identities(n, type, n.resultIsComplex(r));
                   }));
  return std::optional<Values>(std::move(results));
}

/// householder_product with no reflectors (tau (..., 0)): the identity's
/// first n columns, (1, 0) on the diagonal for complex pairs, as eager.
absl::StatusOr<std::optional<Values>>
productOfNoReflectors(NodeImporter &n, const std::pair<std::string, Value> &empty) {
  if (n.opName() != "aten.linalg_householder_product.default" || empty.first != "tau")
    return std::optional<Values>();
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value input, n.tensor("input"));
  const bool pairs = n.resultIsComplex();
  ArrayRef<int64_t> shape = type.getShape().drop_back(pairs ? 1 : 0);
  if (shape.size() < 2 || !isa<FloatType>(type.getElementType()))
    return n.error("the result must be a batch of matrices (..., m, n)");
  // Eager's checks, which hold whether or not there are reflectors.
  if (cast<RankedTensorType>(input.getType()).getShape() != type.getShape())
    return n.error("the result must have the input's shape");
  if (shape.back() > shape[shape.size() - 2])
    return n.error("householder_product needs input.shape[-2] >= input.shape[-1]");
  if (type.getNumElements() > (1 << 22))
    return n.unimplemented("an identity result of more than 4M elements");
  const int64_t rows = shape[shape.size() - 2], cols = shape.back(), part = pairs ? 2 : 1;
  auto element = cast<FloatType>(type.getElementType());
  SmallVector<Attribute> values;
  values.reserve(type.getNumElements());
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    const int64_t entry = (i / part) % (rows * cols);
    const bool one = i % part == 0 && entry / cols == entry % cols;
    values.push_back(n.b().getFloatAttr(element, one ? 1.0 : 0.0));
  }
  Value identity = n.b().create<aten::ConstantOp>(n.loc(), type, DenseElementsAttr::get(type, values));
  return std::optional<Values>(Values{identity});
}

/// Ops that write a source into `self` at positions an index names: with
/// nothing to write, the result is self.
bool writesNothingWhenEmpty(const std::string &op) {
  return op == "aten.scatter.src" || op == "aten.scatter.value" ||
         op == "aten.scatter.reduce" || op == "aten.scatter.value_reduce" ||
         op == "aten.scatter_add.default" || op == "aten.scatter_reduce.two" ||
         op == "aten.index_put.default" || op == "aten.slice_scatter.default" ||
         op == "aten.select_scatter.default" || op == "aten.put.default" ||
         op == "aten.index_add.default" || op == "aten.index_copy.default" ||
         op == "aten.index_reduce.default";
}

/// cat leaves out its pieces with no elements (PyTorch also skips the
/// legacy 1-D [0] piece whatever the other pieces' rank).
absl::StatusOr<std::optional<Values>> catWithoutEmptyPieces(NodeImporter &n,
                                                            const OpHandlerTable &handlers) {
  const std::string &op = n.opName();
  if (op != "aten.cat.default" && op != "aten.concat.default")
    return std::optional<Values>();
  v1::Node kept = n.proto();
  kept.clear_arguments();
  auto tensors = n.tensorArguments();
  auto tensor = tensors.begin();
  for (const v1::Argument &arg : n.proto().arguments()) {
    // tensorArguments() lists the value arguments in this order.
    if (arg.kind_case() == v1::Argument::kValue) {
      Value value = (tensor++)->second;
      if (value && hasNoElements(typeOf(value)))
        continue;
    }
    *kept.add_arguments() = arg;
  }
  NodeImporter rebound = n.rebind(kept);
  ASSIGN_OR_RETURN(Values results, handlers.at(op)(rebound));
  return std::optional<Values>(std::move(results));
}

} // namespace

absl::StatusOr<std::optional<Values>>
importOverEmptyTensors(NodeImporter &n, const OpHandlerTable &handlers) {
  // Results the node leaves out take no part.
  bool everyResultEmpty = n.numResults() > 0;
  for (int r = 0; r < n.numResults() && everyResultEmpty; ++r) {
    if (n.resultLeftOut(r))
      continue;
    ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(r));
    // A result of symbolic size (nonzero of a 0-d tensor: (u0, 0)) has a
    // shape the op computes, elements or not.
    everyResultEmpty = type.hasStaticShape() && hasNoElements(type);
  }
  if (everyResultEmpty) {
    ASSIGN_OR_RETURN(Values results,
                     perResult(n, [&](RankedTensorType type, int) -> absl::StatusOr<Value> {
                       return emptyTensor(n.b(), n.loc(), type);
                     }));
    return std::optional<Values>(std::move(results));
  }

  std::optional<std::pair<std::string, Value>> empty;
  for (auto &argument : n.tensorArguments())
    if (argument.second && hasNoElements(typeOf(argument.second))) {
      empty = argument;
      break;
    }
  if (!empty)
    return std::optional<Values>();

  if (std::optional<double> identity = reductionIdentity(n)) {
    ASSIGN_OR_RETURN(Values results, filled(n, *identity));
    return std::optional<Values>(std::move(results));
  }
  ASSIGN_OR_RETURN(std::optional<Values> product, emptyContraction(n));
  if (product)
    return product;
  ASSIGN_OR_RETURN(std::optional<Values> factors, orderZeroMatrices(n, *empty));
  if (factors)
    return factors;
  ASSIGN_OR_RETURN(std::optional<Values> bases, svdOfNothing(n, *empty));
  if (bases)
    return bases;
  ASSIGN_OR_RETURN(std::optional<Values> columns, productOfNoReflectors(n, *empty));
  if (columns)
    return columns;
  ASSIGN_OR_RETURN(std::optional<Values> pieces, catWithoutEmptyPieces(n, handlers));
  if (pieces)
    return pieces;
  // A histogram of no elements: no counts, and its edges over the range
  // (or [0, 1]), in each coordinate for histogramdd; a bincount of none:
  // minlength zeros. Their own handlers
  // compute them.
  if ((n.opName() == "aten.histogram.bin_ct" || n.opName() == "aten.histogram.bins_tensor" ||
       n.opName() == "aten.bincount.default" ||
       n.opName().rfind("aten._histogramdd_", 0) == 0) &&
      empty->first == "self") {
    ASSIGN_OR_RETURN(Values results, handlers.at(n.opName())(n));
    return std::optional<Values>(std::move(results));
  }
  // Resizing an empty tensor: every element of the result is past self's
  // (Kiln's zeros; eager's uninitialised memory).
  if (n.opName() == "aten.resize.default" && empty->first == "self") {
    ASSIGN_OR_RETURN(Values results, filled(n, 0.0));
    return std::optional<Values>(std::move(results));
  }
  // Padding an empty tensor: every element of the result is padding.
  if (n.opName() == "aten.constant_pad_nd.default" && empty->first == "self") {
    ASSIGN_OR_RETURN(double value, n.floatAttr("value", 0.0));
    ASSIGN_OR_RETURN(Values results, filled(n, value));
    return std::optional<Values>(std::move(results));
  }
  if (writesNothingWhenEmpty(n.opName()) && empty->first != "self") {
    ASSIGN_OR_RETURN(Value self, n.tensor("self"));
    ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
    if (typeOf(self) == type)
      return std::optional<Values>(Values{self});
  }
  return n.unimplemented(absl::StrCat(
      "argument '", empty->first, "' has shape [",
      absl::StrJoin(typeOf(empty->second).getShape(), ", "),
      "] (no elements) and a result has elements; Kiln has no rule for this "
      "op over an empty tensor yet"));
}

} // namespace kiln
