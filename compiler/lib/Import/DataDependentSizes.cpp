//===- DataDependentSizes.cpp - sizes the run computes --------------------===//
//
// This file implements the importer's side of data-dependent sizes: see
// DataDependentSizes.h.
//
//===----------------------------------------------------------------------===//
#include "DataDependentSizes.h"
#include "ImportContext.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"
#include "kiln/common/TensorTypes.h"
#include "kiln/common/SymbolicSizes.h"

#include "absl/strings/str_cat.h"
#include "kiln/Import/GraphImporter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln {
namespace {

bool isDataDependent(const v1::Graph &graph, const std::string &name) {
  for (const v1::SymbolicDim &symbol : graph.symbols())
    if (symbol.name() == name)
      return symbol.data_dependent();
  return false;
}

/// The most rows `selection` (an aten.nonzero, aten.boolean_mask,
/// aten.unique(_dim), aten.repeat_interleave or aten.bincount) can give:
/// its tensor's or mask's element count, unique_dim's size along its dim,
/// or the repeat's or bincount's capacity; -1 for any other op.
int64_t selectionCapacity(Operation *selection) {
  if (auto repeat = dyn_cast_or_null<aten::RepeatInterleaveOp>(selection))
    return repeat.getCapacity();
  if (auto bincount = dyn_cast_or_null<aten::BincountOp>(selection))
    return bincount.getCapacity();
  if (auto unique = dyn_cast_or_null<aten::UniqueOp>(selection))
    return unique.getSelf().getType().getNumElements();
  if (auto unique = dyn_cast_or_null<aten::UniqueDimOp>(selection))
    return unique.getSelf().getType().getDimSize(unique.getDim());
  if (auto nonzero = dyn_cast_or_null<aten::NonzeroOp>(selection))
    return nonzero.getSelf().getType().getNumElements();
  if (auto mask = dyn_cast_or_null<aten::BooleanMaskOp>(selection))
    return mask.getMask().getType().getNumElements();
  return -1;
}

/// The dim of its first result that `selection` computes: unique_dim's
/// dim, the first for the others.
int64_t selectionDim(Operation *selection) {
  if (auto unique = dyn_cast_or_null<aten::UniqueDimOp>(selection))
    return unique.getDim();
  return 0;
}

} // namespace

absl::Status bindDataDependentSizes(OpBuilder &b, Location loc, const v1::Graph &graph,
                                    const v1::TensorType &declared, Value result,
                                    SymbolScope &symbols) {
  // Only a selection computes a data-dependent size: its row count
  // (unique_dim's: its size along its dim).
  int64_t most = selectionCapacity(result.getDefiningOp());
  for (int d = 0; d < declared.symbols_size(); ++d) {
    const std::string &name = declared.symbols(d);
    if (name.empty() || !isDataDependent(graph, name))
      continue;
    bool computes = d == selectionDim(result.getDefiningOp()) && most >= 0;
    bool bound = symbols.values.count(name) != 0;
    // The same selection's result again (a clone or alias returns it).
    if (computes && bound &&
        symbols.dataDependentSource.at(name) == result.getDefiningOp())
      continue;
    if (computes && bound)
      // torch.export unifies two counts it inferred equal (x[m1] + y[m2])
      // and checks that at run time; the ops after both would trust it.
      return absl::UnimplementedError(absl::StrCat(
          "its row count is declared as '", name, "', which an earlier selection "
          "computes: the program assumes the two counts equal, and Kiln cannot "
          "check that before the ops that rely on it"));
    if (bound)
      continue;
    if (!computes)
      return absl::InvalidArgumentError(absl::StrCat(
          "uses data-dependent size '", name, "' before any nonzero, "
          "masked_select, x[mask], unique or repeat_interleave computes it (as its "
          "row count)"));
    symbols.values[name] = b.create<tensor::DimOp>(loc, result, d);
    symbols.dataDependentSource[name] = result.getDefiningOp();
  }
  return absl::OkStatus();
}

absl::StatusOr<Value> paddedOutput(OpBuilder &b, Location loc, const v1::Graph &graph,
                                   const SymbolScope &symbols,
                                   const v1::TensorType &declared, Value value) {
  // Its largest size: every data-dependent size at its max.
  SymbolValues largest;
  for (const auto &[name, source] : symbols.dataDependentSource)
    largest[name] = selectionCapacity(source);
  for (const std::string &text : declared.symbols()) {
    if (text.empty())
      continue;
    ASSIGN_OR_RETURN(SizeExpr expr, parseSizeExpr(text));
    for (const std::string &name : expr.symbols)
      if (!largest.count(name))
        return absl::UnimplementedError(absl::StrCat(
            "a graph output's size uses data-dependent and input sizes together (",
            text, "); Kiln returns such an output only when its other sizes are static"));
  }
  ASSIGN_OR_RETURN(v1::TensorType bound, concreteType(declared, largest));
  // A complex output travels as its (real, imaginary) pairs: two parts an
  // element.
  __int128 wide = isComplex(declared.dtype()) ? 2 : 1;
  for (int64_t extent : bound.shape())
    if ((wide *= extent) > kMaxSymbolValue)
      return absl::InvalidArgumentError(absl::StrCat(
          "a graph output of type ", formatType(declared),
          " has more than 2^40 elements at its data-dependent sizes' max"));
  const int64_t capacity = static_cast<int64_t>(wide);
  auto type = cast<RankedTensorType>(value.getType());
  Value flat = value;
  if (type.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      all[0].push_back(d);
    flat = b.create<tensor::CollapseShapeOp>(loc, value, all);
  }
  Type element = type.getElementType();
  Value buffer = b.create<tensor::EmptyOp>(loc, ArrayRef<int64_t>{capacity}, element);
  // Never past the buffer, whatever the graph declared: the caller reads
  // only the elements the computed sizes give, which it checks against
  // their max.
  Value count = b.create<arith::MinUIOp>(
      loc, b.create<tensor::DimOp>(loc, flat, 0),
      b.create<arith::ConstantIndexOp>(loc, capacity));
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0)}, sizes = {count},
                            strides = {b.getIndexAttr(1)};
  Value front = b.create<tensor::ExtractSliceOp>(loc, flat, offsets, sizes, strides);
  return b.create<tensor::InsertSliceOp>(loc, front, buffer, offsets, sizes, strides)
      .getResult();
}

absl::StatusOr<Value> dataDependentValues(OpBuilder &b, Location loc,
                                          const v1::Graph &graph,
                                          const SymbolScope &symbols,
                                          SmallVectorImpl<int64_t> &maxima) {
  SmallVector<Value> values;
  for (const v1::SymbolicDim &symbol : graph.symbols()) {
    if (!symbol.data_dependent())
      continue;
    auto it = symbols.values.find(symbol.name());
    if (it == symbols.values.end())
      return absl::InvalidArgumentError(absl::StrCat(
          "data-dependent size '", symbol.name(),
          "' is the row count of no nonzero, masked_select, x[mask], unique or "
          "repeat_interleave, so nothing computes it"));
    values.push_back(b.create<arith::IndexCastOp>(loc, b.getI64Type(), it->second));
    maxima.push_back(selectionCapacity(symbols.dataDependentSource.at(symbol.name())));
  }
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())}, b.getI64Type());
  return b.create<tensor::FromElementsOp>(loc, type, values).getResult();
}

std::vector<int64_t> dataDependentMaxima(ModuleOp module) {
  std::vector<int64_t> maxima;
  auto function = module.lookupSymbol<func::FuncOp>(kGraphFunctionName);
  if (!function)
    return maxima;
  if (auto values = function->getAttrOfType<DenseI64ArrayAttr>(kDataDependentMaxAttr))
    maxima.assign(values.asArrayRef().begin(), values.asArrayRef().end());
  return maxima;
}

} // namespace kiln
