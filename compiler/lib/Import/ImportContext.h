//===- ImportContext.h - per-node state of the graph importer -------------===//
//
// This file declares NodeImporter, the view of one kiln.v1.Node that op
// handlers use: typed access to its arguments and results, and errors that
// name the node.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/Dialect/Aten/IR/Limits.h"
#include "kiln/v1/graph.pb.h"

#include "absl/status/statusor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <complex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace kiln {

using ValueTable = std::unordered_map<std::string, mlir::Value>;

/// The names of a graph's complex values (carried as (real, imaginary)
/// pairs in a trailing dim of 2; ComplexHandlers.cpp).
using ComplexValues = std::unordered_set<std::string>;

/// True for the complex dtypes.
inline bool isComplex(v1::DType dtype) {
  return dtype == v1::DTYPE_C64 || dtype == v1::DTYPE_C128;
}

/// The values of a graph's symbolic sizes (Graph.symbols) inside its
/// function: index values read from the symbols argument at its top.
struct SymbolScope {
  std::unordered_map<std::string, mlir::Value> values;
  /// The selection op (aten.nonzero, aten.boolean_mask) that computes each
  /// bound data-dependent size; its largest value is what that op can select.
  std::unordered_map<std::string, mlir::Operation *> dataDependentSource;
  /// Each data-dependent size's max as the graph declares it.
  std::unordered_map<std::string, int64_t> declaredMax;

  /// One index value per symbolic dimension of `type`, outermost first: its
  /// size expression evaluated (empty for a static type).
  absl::StatusOr<llvm::SmallVector<mlir::Value>>
  dynamicSizes(mlir::OpBuilder &b, mlir::Location loc,
               const v1::TensorType &type) const;
};

/// One node being imported.
class NodeImporter {
public:
  NodeImporter(const v1::Node &node, int index, mlir::OpBuilder &builder,
               const ValueTable &values, const SymbolScope *symbols = nullptr)
      : node(node), index(index), builder(builder), values(values),
        symbols(symbols) {}

  mlir::OpBuilder &b() { return builder; }
  mlir::Location loc();
  const std::string &opName() const { return node.op(); }
  const v1::Node &proto() const { return node; }
  /// The node's position in the graph.
  int position() const { return index; }
  /// The same node position, value table and complex values over
  /// `replacement`, a node that must outlive the returned importer.
  NodeImporter rebind(const v1::Node &replacement) const {
    NodeImporter rebound(replacement, index, builder, values, symbols);
    rebound.complexValues = complexValues;
    return rebound;
  }
  /// The same node position over `replacement` and `table`, both of which
  /// must outlive the returned importer; it sees no complex values.
  NodeImporter rebind(const v1::Node &replacement, const ValueTable &table) const {
    return NodeImporter(replacement, index, builder, table, symbols);
  }

  /// INVALID_ARGUMENT "node N (op): <message>".
  absl::Status error(const std::string &message) const;
  /// UNIMPLEMENTED "node N (op): <message>": valid input Kiln cannot compile.
  absl::Status unimplemented(const std::string &message) const;

  /// A tensor argument; error when absent or not a tensor.
  absl::StatusOr<mlir::Value> tensor(const std::string &name);
  /// A `Tensor[]` argument: every argument with this name, in order.
  absl::StatusOr<std::vector<mlir::Value>> tensors(const std::string &name);
  /// A `Tensor?[]` argument (aten.index.Tensor's indices): every argument
  /// with this name, in order; a none attribute is an empty element.
  absl::StatusOr<std::vector<std::optional<mlir::Value>>>
  optionalTensors(const std::string &name);
  /// A tensor argument that may be absent or None.
  absl::StatusOr<std::optional<mlir::Value>> optionalTensor(const std::string &name);
  /// A tensor argument, or a scalar argument materialised as a 0-d constant
  /// of element type `scalarType`.
  absl::StatusOr<mlir::Value> tensorOrScalar(const std::string &name,
                                             mlir::Type scalarType);
  /// Scalar attributes with defaults for absent/None.
  absl::StatusOr<int64_t> intAttr(const std::string &name,
                                  std::optional<int64_t> fallback = {});
  absl::StatusOr<double> floatAttr(const std::string &name,
                                   std::optional<double> fallback = {});
  /// A number argument as a complex number (a real one with imaginary 0).
  absl::StatusOr<std::complex<double>>
  complexAttr(const std::string &name, std::optional<std::complex<double>> fallback = {});
  /// True when a present scalar argument is a complex number.
  bool isComplexScalar(const std::string &name) const;
  absl::StatusOr<bool> boolAttr(const std::string &name,
                                std::optional<bool> fallback = {});
  absl::StatusOr<std::string> stringAttr(const std::string &name,
                                         std::optional<std::string> fallback = {});
  /// An int list; `absentIsEmpty` treats a missing or None argument as [].
  absl::StatusOr<std::vector<int64_t>> intsAttr(const std::string &name,
                                                bool absentIsEmpty = false);
  /// A float list; `absentIsEmpty` treats a missing or None argument as [].
  absl::StatusOr<std::vector<double>> floatsAttr(const std::string &name,
                                                 bool absentIsEmpty = false);
  /// True when a present, non-None scalar argument is a floating-point number.
  bool isFloatScalar(const std::string &name) const;
  /// True when a present scalar argument is a boolean.
  bool isBoolScalar(const std::string &name) const;
  /// True when the argument is a tensor (not an attribute).
  bool isTensor(const std::string &name) const;
  /// The graph's complex values, for handlers of ops on them.
  void setComplexValues(const ComplexValues *complex) { complexValues = complex; }
  /// True when the argument is a complex tensor (a value of pairs).
  bool isComplexTensor(const std::string &name) const;
  /// True when the graph value `valueName` is complex.
  bool isComplexValue(const std::string &valueName) const {
    return complexValues && complexValues->count(valueName) != 0;
  }
  /// True when result `i` is declared complex.
  bool resultIsComplex(int i = 0) const {
    return i < node.outputs_size() && isComplex(node.outputs(i).type().dtype());
  }
  /// Every tensor argument with its schema name, in argument order; the
  /// value is null when it names no known value.
  std::vector<std::pair<std::string, mlir::Value>> tensorArguments() const;
  /// A 0-d (or `shape`d, splat) aten.constant of `element` holding `value`.
  mlir::Value constant(mlir::Type element, double value,
                       llvm::ArrayRef<int64_t> shape = {});
  /// True when the argument is present and not None.
  bool has(const std::string &name) const;

  /// The declared type of result `i`; error when the node declares fewer.
  absl::StatusOr<mlir::RankedTensorType> resultType(int i = 0);
  int numResults() const { return node.outputs_size(); }
  /// The sizes of result `i`'s symbolic dimensions, outermost first (what
  /// aten.view and aten.expand take); empty when it has none.
  absl::StatusOr<llvm::SmallVector<mlir::Value>> resultSizes(int i = 0);
  /// The declared max of the data-dependent size that names result `i`'s
  /// first dim; nullopt when that dim is not one.
  std::optional<int64_t> declaredRowMax(int i = 0) const;
  /// True when the node leaves result `i` out (an unnamed output: None
  /// under convolution_backward's output_mask); nothing reads it.
  bool resultLeftOut(int i) const { return node.outputs(i).name().empty(); }
  /// True when result `i` is declared u8 (carried as i16 inside the graph;
  /// the importer wraps it modulo 256 after the node).
  bool resultIsUnsigned(int i = 0) const;

  /// Normalises a possibly negative dim against `rank`.
  absl::StatusOr<int64_t> normalizeDim(int64_t dim, int64_t rank);

private:
  const v1::Argument *find(const std::string &name) const;
  const v1::Node &node;
  int index;
  mlir::OpBuilder &builder;
  const ValueTable &values;
  const SymbolScope *symbols;
  const ComplexValues *complexValues = nullptr;
};

/// The ranked tensor type of an imported value (every value is one).
inline mlir::RankedTensorType typeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}

/// An aten.pointwise op computing body `fn` over `inputs` with `scalars`,
/// of result type `type`, at node `n`.
mlir::Value pointwise(NodeImporter &n, mlir::RankedTensorType type,
                      llvm::StringRef fn, mlir::ValueRange inputs,
                      llvm::ArrayRef<double> scalars = {});

/// `v` with element type `element` (an aten.pointwise "copy" at node `n`;
/// `v` itself when it has that type already).
mlir::Value convertElements(NodeImporter &n, mlir::Value v, mlir::Type element);
/// The element type a Python number argument `name` compares in against a
/// tensor of element type `self` (PyTorch: a wrapped number only raises the
/// category bool < int < float, floats then taking the default dtype f32).
mlir::Type scalarTypeAgainst(NodeImporter &n, const std::string &name, mlir::Type self);
/// `v` with its dims in the order `perm` (an aten.permute at node `n`).
mlir::Value permuteValue(NodeImporter &n, mlir::Value v, llvm::ArrayRef<int64_t> perm);

/// An int list argument with one entry per spatial dim (`spatial` of them),
/// as PyTorch's pooling and convolution arguments: a single entry repeats,
/// an absent/empty one takes `fallback` (an error naming the argument when
/// there is none), and any other count is an error naming it.
absl::StatusOr<std::vector<int64_t>>
spatialList(NodeImporter &n, const std::string &name, size_t spatial,
            std::optional<std::vector<int64_t>> fallback);

/// `v` viewed with `shape` (an aten.view at node `n`; `v` itself when it
/// has that shape already).
mlir::Value viewValue(NodeImporter &n, mlir::Value v, llvm::ArrayRef<int64_t> shape);

/// An aten.constant holding `value` (of the value's type), at node `n`.
mlir::Value constantOf(NodeImporter &n, mlir::DenseElementsAttr value);

/// An aten.constant of `shape` and `element` whose entry at row-major
/// position k is at(k), stored as T: int64_t for i64, bool for i1, float for
/// f32, double for f64. The one builder of the importers' position, mask and
/// weight tables.
template <typename T, typename F>
mlir::Value tableConstant(NodeImporter &n, llvm::ArrayRef<int64_t> shape,
                          mlir::Type element, F at) {
  auto type = mlir::RankedTensorType::get(shape, element);
  llvm::SmallVector<T> data;
  data.reserve(type.getNumElements());
  for (int64_t k = 0; k < type.getNumElements(); ++k)
    data.push_back(static_cast<T>(at(k)));
  return constantOf(n, mlir::DenseElementsAttr::get(type, llvm::ArrayRef<T>(data)));
}

/// tableConstant over (rows, cols) followed by `trailingOnes` dims of 1:
/// the entry at (i, j) is at(i, j).
template <typename T, typename F>
mlir::Value gridConstant(NodeImporter &n, int64_t rows, int64_t cols,
                         mlir::Type element, F at, int64_t trailingOnes = 0) {
  llvm::SmallVector<int64_t> shape = {rows, cols};
  shape.append(trailingOnes, 1);
  int64_t width = std::max<int64_t>(cols, 1);
  return tableConstant<T>(n, shape, element,
                          [&](int64_t k) { return at(k / width, k % width); });
}

// The size bounds the importer shares with the verifiers (Limits.h).
using aten::kMaxConstantTable;
using aten::kMaxTensorElements;

/// Converts a kiln.v1.TensorType; error text names `what` when invalid.
/// With `widenUnsigned`, u8 becomes i16 (how values carry u8 inside a graph:
/// zero-extended, so MLIR's signless arithmetic, comparisons and casts are
/// PyTorch's unsigned ones); without it, u8 is i8 (the memory layout at the
/// graph's boundary).
absl::StatusOr<mlir::RankedTensorType>
convertTensorType(const v1::TensorType &type, mlir::MLIRContext &context,
                  const std::string &what, bool widenUnsigned = false);

/// u8 at the boundary (i8) to its in-graph form (i16, zero-extended).
mlir::Value widenUnsigned(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);
/// The in-graph u8 form back to i8 for a graph output.
mlir::Value narrowUnsigned(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);
/// Wraps a freshly computed u8 result modulo 256 (skipped for ops that only
/// move existing u8 values).
mlir::Value wrapUnsigned(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);

} // namespace kiln
