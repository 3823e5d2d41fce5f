//===- DataDependentSizes.cpp - sizes the run computes --------------------===//
//
// This file implements the importer's side of data-dependent sizes: see
// DataDependentSizes.h.
//
//===----------------------------------------------------------------------===//
#include "DataDependentSizes.h"

#include "kiln/common/Status.h"
#include "kiln/common/SymbolicSizes.h"

#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln {
namespace {

const v1::SymbolicDim *findSymbol(const v1::Graph &graph, const std::string &name) {
  for (const v1::SymbolicDim &symbol : graph.symbols())
    if (symbol.name() == name)
      return &symbol;
  return nullptr;
}

bool isDataDependent(const v1::Graph &graph, const std::string &name) {
  const v1::SymbolicDim *symbol = findSymbol(graph, name);
  return symbol && symbol->data_dependent();
}

} // namespace

bool hasDataDependentSizes(const v1::Graph &graph) {
  for (const v1::SymbolicDim &symbol : graph.symbols())
    if (symbol.data_dependent())
      return true;
  return false;
}

bool usesDataDependentSize(const v1::Graph &graph, const v1::TensorType &type) {
  for (const std::string &text : type.symbols()) {
    absl::StatusOr<SizeExpr> expr = parseSizeExpr(text);
    if (!text.empty() && expr.ok())
      for (const std::string &name : expr->symbols)
        if (isDataDependent(graph, name))
          return true;
  }
  return false;
}

void bindDataDependentSizes(OpBuilder &b, Location loc, const v1::Graph &graph,
                            const v1::TensorType &declared, Value result,
                            SymbolScope &symbols) {
  for (int d = 0; d < declared.symbols_size(); ++d) {
    const std::string &name = declared.symbols(d);
    if (name.empty() || symbols.values.count(name) || !isDataDependent(graph, name))
      continue;
    symbols.values[name] = b.create<tensor::DimOp>(loc, result, d);
  }
}

absl::StatusOr<Value> paddedOutput(OpBuilder &b, Location loc, const v1::Graph &graph,
                                   const v1::TensorType &declared, Value value) {
  // Its largest size: every data-dependent size at its max.
  SymbolValues largest;
  for (const v1::SymbolicDim &symbol : graph.symbols())
    if (symbol.data_dependent())
      largest[symbol.name()] = symbol.max();
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
  int64_t capacity = 1;
  for (int64_t extent : bound.shape())
    capacity *= extent;
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
  Value count = b.create<tensor::DimOp>(loc, flat, 0);
  return b
      .create<tensor::InsertSliceOp>(
          loc, flat, buffer, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{count}, ArrayRef<OpFoldResult>{b.getIndexAttr(1)})
      .getResult();
}

absl::StatusOr<Value> dataDependentValues(OpBuilder &b, Location loc,
                                          const v1::Graph &graph,
                                          const SymbolScope &symbols) {
  SmallVector<Value> values;
  for (const v1::SymbolicDim &symbol : graph.symbols()) {
    if (!symbol.data_dependent())
      continue;
    auto it = symbols.values.find(symbol.name());
    if (it == symbols.values.end())
      return absl::InvalidArgumentError(absl::StrCat(
          "data-dependent size '", symbol.name(),
          "' is not the whole extent of any node output, so nothing computes it"));
    values.push_back(b.create<arith::IndexCastOp>(loc, b.getI64Type(), it->second));
  }
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())}, b.getI64Type());
  return b.create<tensor::FromElementsOp>(loc, type, values).getResult();
}

} // namespace kiln
