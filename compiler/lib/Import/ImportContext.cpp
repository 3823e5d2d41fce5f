//===- ImportContext.cpp - per-node state of the graph importer -----------===//
//
// This file implements typed argument access for op handlers and the
// conversion of kiln.v1 tensor types.
//
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include "EmptyTensors.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/Import/GraphImporter.h"
#include "kiln/common/NodeName.h"
#include "kiln/common/Status.h"
#include "kiln/common/SymbolicSizes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace kiln {

Location NodeImporter::loc() {
  std::string name = nodeName(node);
  if (name.empty())
    name = std::to_string(index);
  return NameLoc::get(builder.getStringAttr(name));
}

absl::Status NodeImporter::error(const std::string &message) const {
  return absl::InvalidArgumentError(
      absl::StrCat("node ", index, " (", node.op(), "): ", message));
}

absl::Status NodeImporter::unimplemented(const std::string &message) const {
  return absl::UnimplementedError(
      absl::StrCat("node ", index, " (", node.op(), "): ", message));
}

absl::StatusOr<std::vector<Value>>
NodeImporter::tensors(const std::string &name) {
  std::vector<Value> result;
  for (const v1::Argument &arg : node.arguments()) {
    if (arg.name() != name)
      continue;
    if (arg.kind_case() != v1::Argument::kValue)
      return error(absl::StrCat("argument '", name, "' must list tensors"));
    auto it = values.find(arg.value());
    if (it == values.end())
      return error(absl::StrCat("argument '", name, "' refers to unknown value '",
                                arg.value(), "'"));
    result.push_back(it->second);
  }
  if (result.empty())
    return error(absl::StrCat("missing tensor-list argument '", name, "'"));
  return result;
}

absl::StatusOr<std::vector<std::optional<Value>>>
NodeImporter::optionalTensors(const std::string &name) {
  std::vector<std::optional<Value>> result;
  for (const v1::Argument &arg : node.arguments()) {
    if (arg.name() != name)
      continue;
    if (arg.kind_case() == v1::Argument::kAttribute && arg.attribute().has_none()) {
      result.emplace_back();
      continue;
    }
    if (arg.kind_case() != v1::Argument::kValue)
      return error(absl::StrCat("argument '", name,
                                "' must list tensors or None"));
    auto it = values.find(arg.value());
    if (it == values.end())
      return error(absl::StrCat("argument '", name, "' refers to unknown value '",
                                arg.value(), "'"));
    result.emplace_back(it->second);
  }
  if (result.empty())
    return error(absl::StrCat("missing tensor-list argument '", name, "'"));
  return result;
}

bool NodeImporter::isFloatScalar(const std::string &name) const {
  const v1::Argument *arg = find(name);
  return arg && arg->has_attribute() &&
         arg->attribute().kind_case() == v1::Attribute::kF;
}

bool NodeImporter::isBoolScalar(const std::string &name) const {
  const v1::Argument *arg = find(name);
  return arg && arg->has_attribute() &&
         arg->attribute().kind_case() == v1::Attribute::kB;
}

bool NodeImporter::isTensor(const std::string &name) const {
  const v1::Argument *arg = find(name);
  return arg && arg->kind_case() == v1::Argument::kValue;
}

bool NodeImporter::isComplexTensor(const std::string &name) const {
  const v1::Argument *arg = find(name);
  return arg && arg->kind_case() == v1::Argument::kValue && complexValues &&
         complexValues->count(arg->value()) != 0;
}

std::vector<std::pair<std::string, Value>> NodeImporter::tensorArguments() const {
  std::vector<std::pair<std::string, Value>> result;
  for (const v1::Argument &arg : node.arguments()) {
    if (arg.kind_case() != v1::Argument::kValue)
      continue;
    auto it = values.find(arg.value());
    result.emplace_back(arg.name(), it == values.end() ? Value() : it->second);
  }
  return result;
}

Value pointwise(NodeImporter &n, RankedTensorType type, StringRef fn,
                ValueRange inputs, ArrayRef<double> scalars) {
  return n.b().create<aten::PointwiseOp>(n.loc(), type, n.b().getStringAttr(fn),
                                         inputs,
                                         n.b().getDenseF64ArrayAttr(scalars));
}

Value convertElements(NodeImporter &n, Value v, Type element) {
  if (typeOf(v).getElementType() == element)
    return v;
  return pointwise(n, typeOf(v).clone(element), "copy", v);
}

Type scalarTypeAgainst(NodeImporter &n, const std::string &name, Type self) {
  if (n.isFloatScalar(name))
    return isa<FloatType>(self) ? self : n.b().getF32Type();
  if (self.isInteger(1))
    return n.b().getI64Type();
  return self;
}

Value permuteValue(NodeImporter &n, Value v, ArrayRef<int64_t> perm) {
  RankedTensorType type = typeOf(v);
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  return n.b().create<aten::PermuteOp>(n.loc(), type.clone(shape), v,
                                       n.b().getDenseI64ArrayAttr(perm));
}

Value constantOf(NodeImporter &n, DenseElementsAttr value) {
  return n.b().create<aten::ConstantOp>(n.loc(), value.getType(), value);
}

Value viewValue(NodeImporter &n, Value v, ArrayRef<int64_t> shape) {
  if (typeOf(v).getShape() == shape)
    return v;
  return n.b().create<aten::ViewOp>(n.loc(), typeOf(v).clone(shape), v);
}

Value NodeImporter::constant(Type element, double value,
                             ArrayRef<int64_t> shape) {
  return builder.create<aten::ConstantOp>(loc(), element, value, shape);
}

const v1::Argument *NodeImporter::find(const std::string &name) const {
  for (const v1::Argument &arg : node.arguments())
    if (arg.name() == name)
      return &arg;
  return nullptr;
}

bool NodeImporter::has(const std::string &name) const {
  const v1::Argument *arg = find(name);
  return arg && !(arg->has_attribute() && arg->attribute().has_none());
}

absl::StatusOr<Value> NodeImporter::tensor(const std::string &name) {
  const v1::Argument *arg = find(name);
  if (!arg)
    return error(absl::StrCat("missing tensor argument '", name, "'"));
  if (arg->kind_case() != v1::Argument::kValue)
    return error(absl::StrCat("argument '", name, "' must be a tensor"));
  auto it = values.find(arg->value());
  if (it == values.end())
    return error(absl::StrCat("argument '", name, "' refers to unknown value '",
                              arg->value(), "'"));
  return it->second;
}

absl::StatusOr<std::optional<Value>>
NodeImporter::optionalTensor(const std::string &name) {
  if (!has(name))
    return std::optional<Value>();
  auto value = tensor(name);
  if (!value.ok())
    return value.status();
  return std::optional<Value>(*value);
}

absl::StatusOr<Value> NodeImporter::tensorOrScalar(const std::string &name,
                                                   Type scalarType) {
  const v1::Argument *arg = find(name);
  if (!arg || arg->kind_case() != v1::Argument::kAttribute)
    return tensor(name);
  const v1::Attribute &attr = arg->attribute();
  auto type = RankedTensorType::get({}, scalarType);
  Attribute element;
  double value;
  switch (attr.kind_case()) {
  case v1::Attribute::kI:
    value = static_cast<double>(attr.i());
    break;
  case v1::Attribute::kF:
    value = attr.f();
    break;
  case v1::Attribute::kB:
    value = attr.b() ? 1.0 : 0.0;
    break;
  default:
    return error(absl::StrCat("argument '", name, "' must be a tensor or a number"));
  }
  if (auto floatType = dyn_cast<FloatType>(scalarType))
    element = builder.getFloatAttr(floatType, value);
  else if (attr.kind_case() == v1::Attribute::kI)
    element = builder.getIntegerAttr(scalarType, attr.i());
  else if (!(std::abs(value) < 0x1p63))
    return error(absl::StrCat("argument '", name, "' (", value,
                              ") does not fit an integer tensor"));
  else
    element = builder.getIntegerAttr(scalarType, static_cast<int64_t>(value));
  return builder
      .create<aten::ConstantOp>(loc(), type, DenseElementsAttr::get(type, element))
      .getResult();
}

absl::StatusOr<int64_t> NodeImporter::intAttr(const std::string &name,
                                              std::optional<int64_t> fallback) {
  if (!has(name)) {
    if (fallback)
      return *fallback;
    return error(absl::StrCat("missing integer argument '", name, "'"));
  }
  const v1::Argument *arg = find(name);
  if (!arg->has_attribute() || arg->attribute().kind_case() != v1::Attribute::kI)
    return error(absl::StrCat("argument '", name, "' must be an integer"));
  return arg->attribute().i();
}

absl::StatusOr<double> NodeImporter::floatAttr(const std::string &name,
                                               std::optional<double> fallback) {
  if (!has(name)) {
    if (fallback)
      return *fallback;
    return error(absl::StrCat("missing number argument '", name, "'"));
  }
  const v1::Argument *arg = find(name);
  if (arg->has_attribute()) {
    if (arg->attribute().kind_case() == v1::Attribute::kF)
      return arg->attribute().f();
    if (arg->attribute().kind_case() == v1::Attribute::kI)
      return static_cast<double>(arg->attribute().i());
    // A Python bool is a number to torch (arange(False, True), alpha=True).
    if (arg->attribute().kind_case() == v1::Attribute::kB)
      return arg->attribute().b() ? 1.0 : 0.0;
    if (arg->attribute().kind_case() == v1::Attribute::kC)
      return unimplemented(absl::StrCat("argument '", name, "' is a complex number, "
                                        "which this op takes real only"));
  }
  return error(absl::StrCat("argument '", name, "' must be a number"));
}

absl::StatusOr<std::complex<double>>
NodeImporter::complexAttr(const std::string &name,
                          std::optional<std::complex<double>> fallback) {
  if (isComplexScalar(name)) {
    const v1::ComplexNumber &c = find(name)->attribute().c();
    return std::complex<double>(c.real(), c.imag());
  }
  if (fallback && !has(name))
    return *fallback;
  ASSIGN_OR_RETURN(double value, floatAttr(name));
  return std::complex<double>(value, 0.0);
}

bool NodeImporter::isComplexScalar(const std::string &name) const {
  const v1::Argument *arg = find(name);
  return arg && arg->has_attribute() &&
         arg->attribute().kind_case() == v1::Attribute::kC;
}

absl::StatusOr<bool> NodeImporter::boolAttr(const std::string &name,
                                            std::optional<bool> fallback) {
  if (!has(name)) {
    if (fallback)
      return *fallback;
    return error(absl::StrCat("missing boolean argument '", name, "'"));
  }
  const v1::Argument *arg = find(name);
  if (!arg->has_attribute() || arg->attribute().kind_case() != v1::Attribute::kB)
    return error(absl::StrCat("argument '", name, "' must be a boolean"));
  return arg->attribute().b();
}

absl::StatusOr<std::string>
NodeImporter::stringAttr(const std::string &name,
                         std::optional<std::string> fallback) {
  if (!has(name)) {
    if (fallback)
      return *fallback;
    return error(absl::StrCat("missing string argument '", name, "'"));
  }
  const v1::Argument *arg = find(name);
  if (!arg->has_attribute() || arg->attribute().kind_case() != v1::Attribute::kS)
    return error(absl::StrCat("argument '", name, "' must be a string"));
  return arg->attribute().s();
}

absl::StatusOr<std::vector<int64_t>>
NodeImporter::intsAttr(const std::string &name, bool absentIsEmpty) {
  if (!has(name)) {
    if (absentIsEmpty)
      return std::vector<int64_t>();
    return error(absl::StrCat("missing integer-list argument '", name, "'"));
  }
  const v1::Argument *arg = find(name);
  if (arg->has_attribute()) {
    const v1::Attribute &attr = arg->attribute();
    if (attr.kind_case() == v1::Attribute::kInts)
      return std::vector<int64_t>(attr.ints().values().begin(),
                                  attr.ints().values().end());
    if (attr.kind_case() == v1::Attribute::kI) // int[1] accepts a bare int.
      return std::vector<int64_t>{attr.i()};
  }
  return error(absl::StrCat("argument '", name, "' must be a list of integers"));
}

absl::StatusOr<std::vector<double>>
NodeImporter::floatsAttr(const std::string &name, bool absentIsEmpty) {
  if (!has(name)) {
    if (absentIsEmpty)
      return std::vector<double>();
    return error(absl::StrCat("missing float-list argument '", name, "'"));
  }
  const v1::Argument *arg = find(name);
  if (arg->has_attribute()) {
    const v1::Attribute &attr = arg->attribute();
    if (attr.kind_case() == v1::Attribute::kFloats)
      return std::vector<double>(attr.floats().values().begin(),
                                 attr.floats().values().end());
    if (attr.kind_case() == v1::Attribute::kInts) // [2, 2] written as ints.
      return std::vector<double>(attr.ints().values().begin(), attr.ints().values().end());
  }
  return error(absl::StrCat("argument '", name, "' must be a list of numbers"));
}

absl::StatusOr<SmallVector<Value>>
SymbolScope::dynamicSizes(OpBuilder &b, Location loc,
                          const v1::TensorType &type) const {
  SmallVector<Value> sizes;
  for (const std::string &text : type.symbols()) {
    if (text.empty())
      continue;
    ASSIGN_OR_RETURN(SizeExpr expr, parseSizeExpr(text));
    Value size;
    if (expr.coefficient != 1)
      size = b.create<arith::ConstantIndexOp>(loc, expr.coefficient);
    for (const std::string &symbol : expr.symbols) {
      auto it = values.find(symbol);
      if (it == values.end())
        return absl::InvalidArgumentError(
            absl::StrCat("size '", text, "' uses symbol '", symbol,
                         "', which is undeclared or (a data-dependent size) not "
                         "computed yet"));
      size = size ? b.create<arith::MulIOp>(loc, size, it->second).getResult()
                  : it->second;
    }
    sizes.push_back(size);
  }
  return sizes;
}

std::optional<int64_t> NodeImporter::declaredRowMax(int i) const {
  if (!symbols || i >= node.outputs_size() || node.outputs(i).type().symbols_size() == 0)
    return std::nullopt;
  auto it = symbols->declaredMax.find(node.outputs(i).type().symbols(0));
  if (it == symbols->declaredMax.end())
    return std::nullopt;
  return it->second;
}

absl::StatusOr<SmallVector<Value>> NodeImporter::resultSizes(int i) {
  if (i >= node.outputs_size())
    return error(absl::StrCat("declares ", node.outputs_size(),
                              " outputs; the op has at least ", i + 1));
  if (!isSymbolic(node.outputs(i).type()))
    return SmallVector<Value>{};
  if (!symbols)
    return error("output '" + node.outputs(i).name() +
                 "' has a symbolic size but the graph declares no symbols");
  absl::StatusOr<SmallVector<Value>> sizes =
      symbols->dynamicSizes(builder, loc(), node.outputs(i).type());
  if (!sizes.ok())
    return error(std::string(sizes.status().message()));
  return sizes;
}

absl::StatusOr<RankedTensorType> NodeImporter::resultType(int i) {
  if (i >= node.outputs_size())
    return error(absl::StrCat("declares ", node.outputs_size(),
                              " outputs; the op has at least ", i + 1));
  return convertTensorType(node.outputs(i).type(), *builder.getContext(),
                           absl::StrCat("output '", node.outputs(i).name(), "'"),
                           /*widenUnsigned=*/true);
}

bool NodeImporter::resultIsUnsigned(int i) const {
  return i < node.outputs_size() &&
         node.outputs(i).type().dtype() == v1::DTYPE_U8;
}

absl::StatusOr<int64_t> NodeImporter::normalizeDim(int64_t dim, int64_t rank) {
  int64_t bound = std::max<int64_t>(rank, 1);
  if (dim < -bound || dim >= bound)
    return error(absl::StrCat("dimension ", dim, " is out of range for rank ", rank));
  return dim < 0 ? dim + bound : dim;
}

absl::StatusOr<RankedTensorType>
convertTensorType(const v1::TensorType &type, MLIRContext &context,
                  const std::string &what, bool widenUnsigned) {
  Type element = elementTypeFor(type.dtype(), context);
  if (widenUnsigned && type.dtype() == v1::DTYPE_U8)
    element = IntegerType::get(&context, 16);
  if (!element)
    return absl::InvalidArgumentError(
        absl::StrCat(what, " has unsupported dtype ", v1::DType_Name(type.dtype())));
  SmallVector<int64_t> shape;
  int64_t elements = 1;
  if (type.symbols_size() != 0 && type.symbols_size() != type.shape_size())
    return absl::InvalidArgumentError(absl::StrCat(
        what, " has ", type.symbols_size(), " symbol entries for ",
        type.shape_size(), " dimensions"));
  for (auto [d, extent] : llvm::enumerate(type.shape())) {
    if (d < static_cast<size_t>(type.symbols_size()) && !type.symbols(d).empty()) {
      // A symbolic size: dynamic; its bound is checked against its symbols.
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    if (extent < 0)
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has negative extent ", extent));
    // Every shape computation downstream (verifiers, lowering, buffer
    // sizes) then fits in int64 with room to spare.
    if (extent > kMaxTensorElements / elements)
      return absl::InvalidArgumentError(absl::StrCat(
          what, " has shape [", absl::StrJoin(type.shape(), ", "),
          "]: more than 2^40 elements"));
    elements *= std::max<int64_t>(extent, 1);
    // A zero extent is valid; the importer keeps such tensors out of
    // generated code (EmptyTensors.h).
    shape.push_back(extent);
  }
  // A complex tensor is its (real, imaginary) pairs: one more dim of 2,
  // the layout torch stores it in (view_as_real).
  if (isComplex(type.dtype()))
    shape.push_back(2);
  return RankedTensorType::get(shape, element);
}

namespace {
Value unsignedPointwise(OpBuilder &b, Location loc, Value v, StringRef fn,
                        unsigned width) {
  auto type = cast<RankedTensorType>(v.getType());
  if (hasNoElements(type))
    return emptyTensor(b, loc, type.clone(IntegerType::get(b.getContext(), width)));
  return b
      .create<aten::PointwiseOp>(loc,
                                 type.clone(IntegerType::get(b.getContext(), width)),
                                 b.getStringAttr(fn), ValueRange{v},
                                 b.getDenseF64ArrayAttr({}))
      .getResult();
}
} // namespace

Value widenUnsigned(OpBuilder &b, Location loc, Value v) {
  return unsignedPointwise(b, loc, v, "widen_u8", 16);
}

Value narrowUnsigned(OpBuilder &b, Location loc, Value v) {
  return unsignedPointwise(b, loc, v, "narrow_u8", 8);
}

Value wrapUnsigned(OpBuilder &b, Location loc, Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || isa<aten::ViewOp, aten::PermuteOp, aten::ExpandOp, aten::SliceOp,
                  aten::CatOp, aten::IndexSelectOp, aten::GatherOp,
                  aten::ConstantOp, aten::MaxPoolOp, aten::AmaxOp,
                  aten::AminOp>(def))
    return v;
  if (auto pointwise = dyn_cast<aten::PointwiseOp>(def))
    if (pointwise.getFn() == "where" || pointwise.getFn() == "widen_u8")
      return v;
  auto type = cast<RankedTensorType>(v.getType());
  auto maskType = RankedTensorType::get({}, type.getElementType());
  Value mask = b.create<aten::ConstantOp>(
      loc, maskType,
      DenseElementsAttr::get(maskType, b.getIntegerAttr(type.getElementType(), 255)));
  return b
      .create<aten::PointwiseOp>(loc, type, b.getStringAttr("bitwise_and"),
                                 ValueRange{v, mask}, b.getDenseF64ArrayAttr({}))
      .getResult();
}

absl::StatusOr<std::vector<int64_t>>
spatialList(NodeImporter &n, const std::string &name, size_t spatial,
            std::optional<std::vector<int64_t>> fallback) {
  ASSIGN_OR_RETURN(std::vector<int64_t> values, n.intsAttr(name, true));
  if (values.empty()) {
    if (!fallback)
      return n.error(absl::StrCat("argument '", name, "' must not be empty"));
    values = *fallback;
  }
  if (values.size() == 1 && spatial > 1)
    values = std::vector<int64_t>(spatial, values[0]);
  if (values.size() != spatial)
    return n.error(absl::StrCat("argument '", name, "' needs ", spatial,
                                " entries, got ", values.size()));
  return values;
}

} // namespace kiln
