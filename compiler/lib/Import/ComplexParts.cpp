//===- ComplexParts.cpp - complex ops as their real form on each part -----===//
//
// This file implements the complex forms of the ops that act on a complex
// tensor's real and imaginary parts alone: every op that only moves
// elements (pad, repeat, flip, gather, scatter, where, split, ...) and the
// linear ones (cumsum, scatter_add, index_add). Such an op on complex
// tensors is its real form twice, over the real parts and over the
// imaginary ones, packed into pairs. The real handler does the work, over a
// copy of the node whose complex arguments name those parts and whose
// complex results and dtype arguments are declared real. A real tensor in a
// data position joins as (x, 0); a number the op writes into its result (a
// pad or fill value) gives each part its part.
//
// The same rebinding runs the ops that read complex values otherwise:
//  - comparisons: eq when both parts are equal, ne when either differs;
//    isnan and isinf of either part, isfinite of both;
//  - var (std): the real parts' variance plus the imaginary parts' (the
//    square of |z - mean| is the sum of its parts' squares);
//  - the ops that read only a complex value's truth (logical_*, any, all,
//    nonzero): the real op over "either part is nonzero".
//
// x[mask] (index.Tensor with one boolean index) is not run by parts: the
// mask picks rows of the pair tensor, whose count is data-dependent.
//
// A complex number anywhere but a written value (alpha of index_add) is
// UNIMPLEMENTED, naming the argument.
//
//===----------------------------------------------------------------------===//
#include "ComplexPairs.h"
#include "EmptyTensors.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/STLExtras.h"

#include <set>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;
using Names = std::vector<std::string>;

/// The dtype of a complex dtype's parts; other dtypes as they are.
v1::DType partDtype(v1::DType dtype) {
  if (dtype == v1::DTYPE_C64)
    return v1::DTYPE_F32;
  if (dtype == v1::DTYPE_C128)
    return v1::DTYPE_F64;
  return dtype;
}

/// How an op's arguments divide into parts.
struct PartSpec {
  /// Tensor arguments holding the values the op moves or sums: a complex one
  /// gives its part, a real one itself (real part) or zeros (imaginary).
  Names tensors;
  /// Number arguments the op writes into its result (a pad or fill value).
  Names numbers;
};

enum class Part { Real, Imag };

/// The ops that read only a complex value's truth (either part nonzero).
constexpr const char *kTruthOps[] = {
    "aten.logical_and.default", "aten.logical_or.default", "aten.logical_xor.default",
    "aten.logical_not.default", "aten.any.default", "aten.any.dim", "aten.any.dims",
    "aten.all.default", "aten.all.dim", "aten.all.dims", "aten.nonzero.default",
    "aten.count_nonzero.dim_IntList", "aten.count_nonzero.default"};

/// What a rebound node's tensor argument `name` (complex or not) reads.
using TensorBinder =
    std::function<absl::StatusOr<Value>(const std::string &name, bool complex, Value v)>;
/// What a rebound node's written number `name` becomes (nullopt: as it is).
using NumberBinder = std::function<absl::StatusOr<std::optional<double>>(const std::string &name)>;

/// Node `n` imported by its real handler over a copy in which each tensor
/// argument reads what `tensors` gives, each number in `spec.numbers` what
/// `numbers` gives, and complex dtypes (results, dtype arguments) are their
/// parts'.
absl::StatusOr<Values> importRebound(NodeImporter &n, const PartSpec &spec,
                                     const TensorBinder &tensors,
                                     const NumberBinder &numbers) {
  const auto &real = opHandlers();
  auto handler = real.find(n.opName());
  if (handler == real.end())
    return n.unimplemented("Kiln has no real form of this op to run on complex parts");
  v1::Node node = n.proto();
  std::vector<std::pair<std::string, Value>> original = n.tensorArguments();
  ValueTable table;
  size_t next = 0;
  for (int k = 0; k < node.arguments_size(); ++k) {
    v1::Argument &arg = *node.mutable_arguments(k);
    if (arg.kind_case() == v1::Argument::kValue) {
      Value v = original[next++].second;
      if (!v)
        return n.error(absl::StrCat("argument '", arg.name(), "' names no value"));
      ASSIGN_OR_RETURN(Value bound, tensors(arg.name(), n.isComplexValue(arg.value()), v));
      std::string name = absl::StrCat("%part", k);
      arg.set_value(name);
      table[name] = bound;
      continue;
    }
    if (!arg.has_attribute() || arg.attribute().has_none())
      continue;
    v1::Attribute &attr = *arg.mutable_attribute();
    if (llvm::is_contained(spec.numbers, arg.name())) {
      ASSIGN_OR_RETURN(std::optional<double> value, numbers(arg.name()));
      if (value)
        attr.set_f(*value);
    } else if (attr.kind_case() == v1::Attribute::kC) {
      return n.unimplemented(absl::StrCat("argument '", arg.name(), "' is a complex "
                                          "number, which this op takes real only"));
    } else if (attr.kind_case() == v1::Attribute::kDtype) {
      attr.set_dtype(partDtype(attr.dtype()));
    }
  }
  for (v1::Value &output : *node.mutable_outputs())
    if (output.has_type())
      output.mutable_type()->set_dtype(partDtype(output.type().dtype()));
  NodeImporter rebound = n.rebind(node, table);
  // The real import's rules for tensors with no elements hold part by part.
  ASSIGN_OR_RETURN(std::optional<Values> overEmpty, importOverEmptyTensors(rebound, real));
  if (overEmpty)
    return std::move(*overEmpty);
  return handler->second(rebound);
}

/// Node `n` over one part of its data (see PartSpec).
absl::StatusOr<Values> importPart(NodeImporter &n, const PartSpec &spec, Part part) {
  TensorBinder tensors = [&](const std::string &name, bool complex,
                             Value v) -> absl::StatusOr<Value> {
    if (complex)
      return part == Part::Real ? realPart(n, v) : imagPart(n, v);
    if (part == Part::Imag && llvm::is_contained(spec.tensors, name))
      return n.constant(typeOf(v).getElementType(), 0.0, typeOf(v).getShape());
    return v;
  };
  NumberBinder numbers = [&](const std::string &name) -> absl::StatusOr<std::optional<double>> {
    if (!n.isComplexScalar(name) && part == Part::Real)
      return std::nullopt;
    ASSIGN_OR_RETURN(std::complex<double> value, n.complexAttr(name));
    return part == Part::Real ? value.real() : value.imag();
  };
  return importRebound(n, spec, tensors, numbers);
}

/// How the two parts' results make the op's.
enum class Combine {
  Pack,      // complex results: (real part's, imaginary part's)
  And,       // bool results: both parts'
  Or,        // bool results: either part's
  Sum,       // real results: the sum (var); complex ones packed (var_mean's mean)
  RootSum,   // real results: the root of the sum (std)
  ImagZero,  // complex results: (real part's, 0) (ones, ones_like)
};

absl::StatusOr<Values> byParts(NodeImporter &n, const PartSpec &spec, Combine combine) {
  ASSIGN_OR_RETURN(Values re, importPart(n, spec, Part::Real));
  Values im;
  if (combine != Combine::ImagZero) {
    ASSIGN_OR_RETURN(im, importPart(n, spec, Part::Imag));
  }
  Values results;
  for (size_t r = 0; r < re.size(); ++r) {
    if (!re[r] || (combine != Combine::ImagZero && !im[r])) {
      results.push_back(Value());
      continue;
    }
    RankedTensorType type = typeOf(re[r]);
    switch (combine) {
    case Combine::Pack:
      // A real result (full_like of a complex tensor with a real dtype) is
      // the real part's.
      results.push_back(n.resultIsComplex(r) ? pack(n, re[r], im[r]) : re[r]);
      break;
    case Combine::ImagZero:
      results.push_back(
          n.resultIsComplex(r)
              ? pack(n, re[r], n.constant(type.getElementType(), 0.0, type.getShape()))
              : re[r]);
      break;
    case Combine::And:
      results.push_back(pointwise(n, type, "logical_and", {re[r], im[r]}));
      break;
    case Combine::Or:
      results.push_back(pointwise(n, type, "logical_or", {re[r], im[r]}));
      break;
    case Combine::Sum:
    case Combine::RootSum: {
      if (n.resultIsComplex(r)) { // var_mean's and std_mean's mean
        results.push_back(pack(n, re[r], im[r]));
        break;
      }
      Value sum = n.b().create<aten::AddOp>(n.loc(), type, re[r], im[r],
                                            n.b().getF64FloatAttr(1.0));
      results.push_back(combine == Combine::Sum ? sum : pointwise(n, type, "sqrt", sum));
      break;
    }
    }
  }
  return results;
}

/// Node `n` with each complex tensor read as its truth (either part
/// nonzero), by the real op.
absl::StatusOr<Values> byTruth(NodeImporter &n) {
  TensorBinder tensors = [&](const std::string &, bool complex,
                             Value v) -> absl::StatusOr<Value> {
    return complex ? complexIsNonZero(n, v) : v;
  };
  NumberBinder numbers = [](const std::string &) -> absl::StatusOr<std::optional<double>> {
    return std::nullopt;
  };
  return importRebound(n, PartSpec{}, tensors, numbers);
}

/// Wraps a by-parts form in a check that argument `name` (a reduction's
/// name) is one of `linear`, the reductions that act on parts alone.
OpHandler linearReduction(PartSpec spec, std::string name, Names linear) {
  return [spec = std::move(spec), name = std::move(name),
          linear = std::move(linear)](NodeImporter &n) -> absl::StatusOr<Values> {
    if (n.has(name)) {
      ASSIGN_OR_RETURN(std::string reduce, n.stringAttr(name));
      if (!llvm::is_contained(linear, reduce))
        return n.unimplemented(absl::StrCat(name, "='", reduce, "' on complex tensors "
                                            "(Kiln has the reductions that act on each "
                                            "part alone: sum, add, mean)"));
    }
    return byParts(n, spec, Combine::Pack);
  };
}

OpHandler parts(PartSpec spec, Combine combine = Combine::Pack) {
  return [spec = std::move(spec), combine](NodeImporter &n) { return byParts(n, spec, combine); };
}

/// x[mask] of a complex x: its one boolean index picks rows of the pair
/// tensor (one aten.boolean_mask, the row count data-dependent), as
/// masked_select does; any other indexing runs `byPart`, for static sizes.
OpHandler maskOrParts(OpHandler byPart) {
  return [byPart = std::move(byPart)](NodeImporter &n) -> absl::StatusOr<Values> {
    ASSIGN_OR_RETURN(std::optional<Value> mask, soleBooleanIndex(n));
    ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
    if (mask && n.isComplexTensor("self")) {
      ASSIGN_OR_RETURN(Value self, n.tensor("self"));
      return indexByMask(n, type, self, *mask);
    }
    if (!type.hasStaticShape())
      return n.unimplemented("complex indexing other than by one boolean mask, with a "
                             "result of symbolic size");
    return byPart(n);
  };
}

} // namespace

bool complexFormTakesSymbolicSizes(const std::string &op) {
  return llvm::is_contained(kTruthOps, op) || op == "aten.masked_select.default" ||
         op == "aten.index.Tensor";
}

std::set<std::string> addComplexPartHandlers(OpHandlerTable &table) {
  OpHandlerTable t;
  const PartSpec self{{"self"}, {}};
  for (const char *op :
       {"aten.repeat.default", "aten.diagonal.default", "aten.diagonal_copy.default",
        "aten.flip.default", "aten.roll.default", "aten.gather.default",
        "aten.index_select.default", "aten.as_strided.default",
        "aten.as_strided_copy.default", "aten.split_with_sizes.default",
        "aten.split.Tensor", "aten.unbind.int", "aten.cumsum.default",
        "aten.zeros_like.default", "aten.tril.default", "aten.triu.default",
        "aten.unfold.default", "aten.narrow.default", "aten.t.default",
        "aten.expand_copy.default", "aten.permute_copy.default",
        "aten.transpose_copy.int", "aten.select_copy.int", "aten.slice_copy.Tensor",
        "aten.view_copy.default", "aten.squeeze_copy.dims", "aten.unsqueeze_copy.default",
        "aten.pixel_shuffle.default", "aten.pixel_unshuffle.default",
        "aten.resize.default"})
    t[op] = parts(self);
  t["aten.index.Tensor"] = maskOrParts(parts(self));
  t["aten.constant_pad_nd.default"] = parts({{"self"}, {"value"}});
  for (const char *op : {"aten.scatter.src", "aten.scatter_add.default"})
    t[op] = parts({{"self", "src"}, {}});
  t["aten.scatter.value"] = parts({{"self"}, {"value"}});
  t["aten.scatter.reduce"] = linearReduction({{"self", "src"}, {}}, "reduce", {"add"});
  t["aten.scatter.value_reduce"] = linearReduction({{"self"}, {"value"}}, "reduce", {"add"});
  t["aten.scatter_reduce.two"] =
      linearReduction({{"self", "src"}, {}}, "reduce", {"sum", "mean"});
  for (const char *op : {"aten.slice_scatter.default", "aten.select_scatter.default",
                         "aten.diagonal_scatter.default", "aten.as_strided_scatter.default"})
    t[op] = parts({{"self", "src"}, {}});
  t["aten.masked_scatter.default"] = parts({{"self", "source"}, {}});
  t["aten.copy.default"] = parts({{"self", "src"}, {}});
  t["aten.index_add.default"] = parts({{"self", "source"}, {}});
  t["aten.put.default"] = parts({{"self", "source"}, {}});
  for (const char *op : {"aten.index_put.default", "aten.index_put_.default"})
    t[op] = parts({{"self", "values"}, {}});
  t["aten.where.self"] = parts({{"self", "other"}, {}});
  t["aten.where.ScalarSelf"] = parts({{"other"}, {"self"}});
  t["aten.where.ScalarOther"] = parts({{"self"}, {"other"}});
  t["aten.where.Scalar"] = parts({{}, {"self", "other"}});
  t["aten.masked_fill.Scalar"] = parts({{"self"}, {"value"}});
  t["aten.masked_fill.Tensor"] = parts({{"self", "value"}, {}});
  t["aten.fill.Scalar"] = parts({{"self"}, {"value"}});
  t["aten.fill.Tensor"] = parts({{"self", "value"}, {}});
  t["aten.full.default"] = parts({{}, {"fill_value"}});
  t["aten.full_like.default"] = parts({{"self"}, {"fill_value"}});
  t["aten.new_full.default"] = parts({{"self"}, {"fill_value"}});
  t["aten.scalar_tensor.default"] = parts({{}, {"s"}});
  t["aten.zeros.default"] = parts({});
  t["aten.new_zeros.default"] = parts(self);
  // Empty tensors' values are unspecified; a real one's are zeros.
  for (const char *op : {"aten.empty.memory_format", "aten.empty.default",
                         "aten.empty_strided.default", "aten.empty_permuted.default"})
    t[op] = parts({});
  for (const char *op : {"aten.empty_like.default", "aten.new_empty.default",
                         "aten.new_empty_strided.default"})
    t[op] = parts(self);
  t["aten.stack.default"] = parts({{"tensors"}, {}});
  for (const char *op : {"aten.ones.default", "aten.ones_like.default", "aten.new_ones.default"})
    t[op] = parts(self, Combine::ImagZero);
  for (const char *op : {"aten.var.correction", "aten.var.dim", "aten.var.default",
                         "aten.var_mean.correction"})
    t[op] = parts(self, Combine::Sum);
  for (const char *op : {"aten.std.correction", "aten.std.dim", "aten.std.default"})
    t[op] = parts(self, Combine::RootSum);
  const PartSpec compared{{"self", "other"}, {"other"}};
  t["aten.eq.Tensor"] = parts(compared, Combine::And);
  t["aten.eq.Scalar"] = parts(compared, Combine::And);
  t["aten.ne.Tensor"] = parts(compared, Combine::Or);
  t["aten.ne.Scalar"] = parts(compared, Combine::Or);
  t["aten.isnan.default"] = parts(self, Combine::Or);
  t["aten.isinf.default"] = parts(self, Combine::Or);
  t["aten.isfinite.default"] = parts(self, Combine::And);
  for (const char *op : kTruthOps)
    t[op] = byTruth;
  // Only ops with a real form qualify; the table's own forms come first.
  const auto &real = opHandlers();
  std::set<std::string> added;
  for (auto &[op, handler] : t)
    if (real.count(op) && table.emplace(op, std::move(handler)).second)
      added.insert(op);
  return added;
}

} // namespace kiln
