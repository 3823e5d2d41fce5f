//===- GraphImporter.cpp - kiln.v1.Graph to the aten dialect --------------===//
//
// This file implements the importer: values and parameters become function
// arguments (read-only for bufferization), nodes become aten ops through the
// op handler table, and the result is verified before it is returned.
//
//===----------------------------------------------------------------------===//
#include "kiln/Import/GraphImporter.h"

#include "ComplexPairs.h"
#include "DataDependentSizes.h"
#include "EmptyTensors.h"
#include "ImportContext.h"
#include "OpHandlers.h"
#include "PerSampleLoop.h"
#include "SymbolicAgreement.h"

#include "kiln/Dialect/Aten/IR/AtenDialect.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"
#include "kiln/common/SymbolicSizes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include <set>

using namespace mlir;

namespace kiln {

Type elementTypeFor(v1::DType dtype, MLIRContext &context) {
  Builder b(&context);
  switch (dtype) {
  case v1::DTYPE_F32:
  case v1::DTYPE_C64: // (real, imaginary) pairs: a trailing dim of 2
    return b.getF32Type();
  case v1::DTYPE_F64:
  case v1::DTYPE_C128:
    return b.getF64Type();
  case v1::DTYPE_F16:
    return b.getF16Type();
  case v1::DTYPE_BF16:
    return b.getBF16Type();
  case v1::DTYPE_I8:
  case v1::DTYPE_U8:
    return b.getIntegerType(8);
  case v1::DTYPE_I16:
    return b.getIntegerType(16);
  case v1::DTYPE_I32:
    return b.getIntegerType(32);
  case v1::DTYPE_I64:
    return b.getIntegerType(64);
  case v1::DTYPE_BOOL:
    return b.getI1Type();
  default:
    return {};
  }
}

std::vector<std::string> supportedOps() {
  std::vector<std::string> names;
  for (const auto &[name, handler] : opHandlers())
    names.push_back(name);
  return names;
}

namespace {

/// How a value crosses the function's boundary. One with no elements is
/// never read or written, so it crosses as rank-1 [0]: MLIR's bare-pointer
/// calling convention has no strides for a zero extent after the first.
RankedTensorType boundaryType(RankedTensorType type) {
  return hasNoElements(type) ? RankedTensorType::get({0}, type.getElementType())
                             : type;
}

/// Declares the function's arguments and fills the value table with them.
absl::Status declareArguments(const v1::Graph &graph, OpBuilder &builder,
                              SmallVector<Type> &types,
                              SmallVector<std::string> &names) {
  MLIRContext &context = *builder.getContext();
  auto declare = [&](const v1::Value &value,
                     const std::string &what) -> absl::Status {
    if (value.name().empty())
      return absl::InvalidArgumentError(absl::StrCat(what, " has no name"));
    ASSIGN_OR_RETURN(RankedTensorType type,
                     convertTensorType(value.type(), context,
                                       absl::StrCat(what, " '", value.name(), "'")));
    types.push_back(boundaryType(type));
    names.push_back(value.name());
    return absl::OkStatus();
  };
  for (const v1::Parameter &param : graph.parameters())
    RETURN_IF_ERROR(declare(param.value(), "parameter"));
  for (const v1::Value &input : graph.inputs())
    RETURN_IF_ERROR(declare(input, "input"));
  return absl::OkStatus();
}

/// Checks Graph.symbols and the symbolic sizes of the graph's arguments:
/// parameters are static, and every symbol is the whole extent of some
/// input dimension (so that a call's inputs bind it), except a
/// data-dependent one, which no input may use (a node's output binds it).
absl::Status checkGraphSymbols(const v1::Graph &graph) {
  RETURN_IF_ERROR(checkSymbolDeclarations(graph.symbols()));
  for (const v1::Parameter &param : graph.parameters())
    if (isSymbolic(param.value().type()))
      return absl::InvalidArgumentError(absl::StrCat(
          "parameter '", param.value().name(), "' has a symbolic size; weights are static"));
  std::set<std::string> bound, dataDependent;
  for (const v1::SymbolicDim &symbol : graph.symbols())
    if (symbol.data_dependent())
      dataDependent.insert(symbol.name());
  for (const v1::Value &input : graph.inputs()) {
    RETURN_IF_ERROR(checkTypeSymbols(input.type(), graph.symbols(),
                                     absl::StrCat("input '", input.name(), "'")));
    for (const std::string &text : input.type().symbols()) {
      if (text.empty())
        continue;
      ASSIGN_OR_RETURN(SizeExpr expr, parseSizeExpr(text));
      for (const std::string &name : expr.symbols)
        if (dataDependent.count(name))
          return absl::InvalidArgumentError(absl::StrCat(
              "input '", input.name(), "' uses data-dependent size '", name,
              "'; only a node's output may"));
      if (expr.isSymbol())
        bound.insert(expr.symbols[0]);
    }
  }
  for (const v1::SymbolicDim &symbol : graph.symbols())
    if (!symbol.data_dependent() && !bound.count(symbol.name()))
      return absl::InvalidArgumentError(absl::StrCat(
          "symbol '", symbol.name(), "' is not the whole extent of any input "
          "dimension, so no call could bind it"));
  for (int i = 0; i < graph.nodes_size(); ++i)
    for (const v1::Value &output : graph.nodes(i).outputs())
      RETURN_IF_ERROR(checkTypeSymbols(
          output.type(), graph.symbols(),
          absl::StrCat("node ", i, " (", graph.nodes(i).op(), ") output '",
                       output.name(), "'")));
  return absl::OkStatus();
}

/// The ATen ops whose import and lowering handle symbolic sizes: their
/// handlers take every shape from the declared types and build only aten
/// ops that accept dynamic ones (acceptsSymbolicSizes). Any other op that
/// meets a symbolic size is UNIMPLEMENTED before its handler runs (a
/// handler doing shape arithmetic would read ShapedType::kDynamic as one).
bool importsSymbolicSizes(const std::string &op) {
  static const std::set<std::string> ops = {
      "aten.add.Tensor", "aten.add.Scalar", "aten.sub.Tensor", "aten.sub.Scalar",
      "aten.mul.Tensor", "aten.mul.Scalar", "aten.div.Tensor", "aten.div.Scalar",
      "aten.neg.default", "aten.relu.default", "aten.tanh.default",
      "aten.sigmoid.default", "aten.exp.default", "aten.gelu.default",
      "aten.mm.default", "aten.addmm.default", "aten.bmm.default",
      "aten._softmax.default", "aten.softmax.int", "aten.view.default",
      "aten._unsafe_view.default", "aten.reshape.default", "aten.unsqueeze.default",
      "aten.squeeze.default", "aten.squeeze.dim", "aten.squeeze.dims",
      "aten.permute.default", "aten.transpose.int", "aten.t.default",
      "aten.expand.default", "aten.clone.default", "aten.alias.default",
      "aten.detach.default", "aten.sum.dim_IntList", "aten.sum.default",
      "aten.mean.dim", "aten.mean.default", "aten.native_layer_norm.default",
      "aten._log_softmax.default", "aten.log_softmax.int", "aten.select.int",
      "aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther",
      "aten.where.Scalar", "aten.masked_fill.Scalar", "aten.masked_fill.Tensor",
      "aten.full_like.default", "aten.zeros_like.default", "aten.ones_like.default",
      "aten.any.dim", "aten.any.dims", "aten.any.default", "aten.all.dim",
      "aten.all.default", "aten.amax.default", "aten.amin.default",
      "aten.prod.dim_int", "aten._to_copy.default", "aten.maximum.default",
      "aten.minimum.default", "aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor",
      "aten.rsub.Scalar", "aten.rsub.Tensor", "aten.clamp.default",
      "aten.clamp_min.default", "aten.clamp_max.default", "aten.hardtanh.default",
      "aten.leaky_relu.default", "aten.silu.default", "aten.sqrt.default",
      "aten.rsqrt.default", "aten.log.default", "aten.erf.default",
      "aten.reciprocal.default", "aten.abs.default", "aten.sin.default",
      "aten.cos.default", "aten.logical_not.default", "aten.logical_and.default",
      "aten.logical_or.default", "aten.isnan.default", "aten.isinf.default",
      // Their results have data-dependent sizes (DataDependentHandlers.cpp).
      "aten.nonzero.default", "aten.masked_select.default", "aten.index.Tensor",
      "aten._unique2.default", "aten.unique_consecutive.default", "aten.unique_dim.default",
      "aten.slice.Tensor",
      "aten.repeat_interleave.Tensor", "aten.bincount.default",
      // Rows picked by a data-dependent count of positions.
      "aten.index_select.default"};
  static const std::set<std::string> comparisons = [] {
    std::set<std::string> names;
    for (const char *fn : {"eq", "ne", "lt", "le", "gt", "ge"})
      for (const char *overload : {"Tensor", "Scalar"})
        names.insert(absl::StrCat("aten.", fn, ".", overload));
    return names;
  }();
  return ops.count(op) != 0 || comparisons.count(op) != 0;
}

/// True when a node reads or declares a value of symbolic size.
bool touchesSymbolicSizes(const v1::Node &node, const ValueTable &values) {
  for (const v1::Value &output : node.outputs())
    if (isSymbolic(output.type()))
      return true;
  for (const v1::Argument &argument : node.arguments()) {
    if (argument.kind_case() != v1::Argument::kValue)
      continue;
    auto it = values.find(argument.value());
    if (it != values.end() && !typeOf(it->second).hasStaticShape())
      return true;
  }
  return false;
}

/// True when every complex value a node reads or declares has a static
/// shape (the complex handlers build for static shapes), but for the
/// complex results of the forms that take symbolic sizes (a complex
/// masked_select's data-dependent row count).
bool complexValuesStatic(const v1::Node &node, const ValueTable &values,
                         const ComplexValues &complex) {
  for (const v1::Value &output : node.outputs())
    if (isComplex(output.type().dtype()) && isSymbolic(output.type()) &&
        !complexFormTakesSymbolicSizes(node.op()))
      return false;
  for (const v1::Argument &argument : node.arguments()) {
    if (argument.kind_case() != v1::Argument::kValue || !complex.count(argument.value()))
      continue;
    auto it = values.find(argument.value());
    if (it != values.end() && !typeOf(it->second).hasStaticShape())
      return false;
  }
  return true;
}

/// True when a node reads a complex value or number or declares a complex
/// result.
bool touchesComplex(const v1::Node &node, const ComplexValues &complex) {
  for (const v1::Value &output : node.outputs())
    if (isComplex(output.type().dtype()))
      return true;
  for (const v1::Argument &argument : node.arguments()) {
    if (argument.kind_case() == v1::Argument::kValue && complex.count(argument.value()))
      return true;
    if (argument.has_attribute() && argument.attribute().has_c())
      return true; // a complex number (x == 1j)
  }
  return false;
}

/// True when a node reads a value with no elements (an empty result, such
/// as batch norm's unused saved statistics, is the handler's to leave out).
bool touchesEmptyTensors(const v1::Node &node, const ValueTable &values) {
  for (const v1::Argument &argument : node.arguments()) {
    if (argument.kind_case() != v1::Argument::kValue)
      continue;
    auto it = values.find(argument.value());
    if (it != values.end() && hasNoElements(typeOf(it->second)))
      return true;
  }
  return false;
}

/// The aten ops whose lowering handles dynamic (symbolic) sizes. Any other
/// op meeting one is UNIMPLEMENTED, named, rather than a verifier failure.
bool acceptsSymbolicSizes(Operation *op) {
  return isa<aten::AddOp, aten::SubOp, aten::MulOp, aten::DivOp, aten::NegOp,
             aten::ReluOp, aten::TanhOp, aten::SigmoidOp, aten::ExpOp,
             aten::GeluOp, aten::MmOp, aten::AddmmOp, aten::BmmOp,
             aten::SoftmaxOp, aten::LogSoftmaxOp, aten::SumOp, aten::MeanOp,
             aten::ProdOp, aten::AmaxOp, aten::AminOp, aten::AnyOp, aten::AllOp,
             aten::NativeLayerNormOp, aten::ViewOp, aten::PermuteOp,
             aten::ExpandOp, aten::PointwiseOp, aten::SliceOp, aten::NonzeroOp,
             aten::BooleanMaskOp, aten::UniqueOp, aten::UniqueDimOp,
             aten::RepeatInterleaveOp, aten::BincountOp,
             aten::IndexSelectOp>(op);
}

bool hasDynamicType(Operation *op) {
  auto dynamic = [](Type type) {
    auto ranked = dyn_cast<RankedTensorType>(type);
    return ranked && !ranked.hasStaticShape();
  };
  return llvm::any_of(op->getOperandTypes(), dynamic) ||
         llvm::any_of(op->getResultTypes(), dynamic);
}

/// The ops a node's handler created (after `before`, or from the start of
/// `body`), checked for symbolic sizes they cannot carry.
absl::Status checkSymbolicOps(NodeImporter &importer, Block *body,
                              Operation *before) {
  auto begin = before ? std::next(before->getIterator()) : body->begin();
  for (Operation &op : llvm::make_range(begin, body->end())) {
    Dialect *dialect = op.getDialect();
    if (!dialect || !isa<aten::AtenDialect>(dialect) || !hasDynamicType(&op))
      continue;
    if (!acceptsSymbolicSizes(&op))
      return importer.unimplemented(absl::StrCat(
          "symbolic sizes reach ", op.getName().getStringRef().str(),
          ", which Kiln compiles for static sizes only (docs/architecture.md, "
          "\"Variable sizes\", lists the ops that take them)"));
    if (isa<aten::ViewOp, aten::ExpandOp>(op) &&
        static_cast<int64_t>(op.getNumOperands() - 1) !=
            cast<RankedTensorType>(op.getResult(0).getType()).getNumDynamicDims())
      return importer.unimplemented(absl::StrCat(
          "this op's import makes an ", op.getName().getStringRef().str(),
          " of a symbolic size it cannot compute yet"));
  }
  return absl::OkStatus();
}

/// The size expressions of a value crossing the boundary, for
/// kiln-bare-boundary: one string per dimension, "" when static.
ArrayAttr boundarySizes(Builder &b, const v1::TensorType &type) {
  SmallVector<Attribute> sizes;
  for (int d = 0; d < type.shape_size(); ++d)
    sizes.push_back(b.getStringAttr(d < type.symbols_size() ? type.symbols(d) : ""));
  return b.getArrayAttr(sizes);
}

absl::Status defineValue(ValueTable &values, const std::string &name,
                         Value value) {
  if (name.empty())
    return absl::InvalidArgumentError("a value has an empty name");
  if (!values.emplace(name, value).second)
    return absl::InvalidArgumentError(
        absl::StrCat("value '", name, "' is defined more than once"));
  return absl::OkStatus();
}

/// Verifies the ops that define a node's results, so a shape or attribute
/// the aten verifiers reject is reported against the node and its op.
absl::Status verifyResults(NodeImporter &importer, ArrayRef<Value> results) {
  std::string diagnostics;
  ScopedDiagnosticHandler handler(
      importer.b().getContext(), [&](Diagnostic &diag) {
        absl::StrAppend(&diagnostics, diagnostics.empty() ? "" : "\n", diag.str());
        return success();
      });
  for (Value result : results) {
    Operation *op = result ? result.getDefiningOp() : nullptr;
    if (op && failed(verify(op)))
      return importer.error(diagnostics);
  }
  return absl::OkStatus();
}

/// Erases the ops after `before` (all of `body`'s when null), last first.
void eraseOpsAfter(Block &body, Operation *before) {
  while (!body.empty() && &body.back() != before)
    body.back().erase();
}

/// The node as one aten.operator: its tensor arguments in order, a result
/// of its declared type per output it names (an output it leaves out has
/// none and stays undefined), and `why` (UNIMPLEMENTED "node N (op):
/// reason") as the reason, without the prefix the node's position
/// replaces. INVALID_ARGUMENT for an argument naming no value, as the
/// node's own import would say.
absl::StatusOr<SmallVector<Value>> unsupportedNode(NodeImporter &importer,
                                                   const absl::Status &why) {
  SmallVector<Value> inputs;
  auto arguments = importer.tensorArguments();
  size_t next = 0;
  for (const v1::Argument &arg : importer.proto().arguments()) {
    if (arg.kind_case() != v1::Argument::kValue)
      continue;
    Value value = arguments[next++].second;
    if (!value)
      return importer.error(absl::StrCat("argument '", arg.name(),
                                         "' refers to unknown value '",
                                         arg.value(), "'"));
    inputs.push_back(value);
  }
  SmallVector<Type> types;
  for (int r = 0; r < importer.numResults(); ++r) {
    if (importer.resultLeftOut(r))
      continue;
    ASSIGN_OR_RETURN(RankedTensorType type, importer.resultType(r));
    types.push_back(type);
  }
  absl::string_view reason = why.message();
  const std::string &op = importer.opName();
  for (const std::string &prefix :
       {absl::StrCat("node ", importer.position(), " (", op, "): "),
        absl::StrCat("node ", importer.position(), ": ")})
    if (absl::ConsumePrefix(&reason, prefix))
      break;
  OpBuilder &b = importer.b();
  auto node = b.create<aten::OperatorOp>(
      importer.loc(), types, b.getStringAttr(op),
      b.getStringAttr(StringRef(reason.data(), reason.size())), inputs);
  SmallVector<Value> results;
  auto produced = node->getResults().begin();
  for (int r = 0; r < importer.numResults(); ++r)
    results.push_back(importer.resultLeftOut(r) ? Value() : *produced++);
  return results;
}

/// Marks every op node `index` imported to (those after `before`) with
/// `kiln.node`, the node's position, for kiln-place-nodes.
void markNodeOps(Block &body, Operation *before, int index) {
  Builder b(body.getParentOp()->getContext());
  auto position = b.getI64IntegerAttr(index);
  for (Operation &op : llvm::make_range(
           before ? std::next(Block::iterator(before)) : body.begin(), body.end()))
    op.setAttr(kNodeAttrName, position);
}

} // namespace

absl::StatusOr<OwningOpRef<ModuleOp>> importGraph(const v1::Graph &graph,
                                                  MLIRContext &context,
                                                  const ImportOptions &options) {
  context.loadDialect<aten::AtenDialect, func::FuncDialect, arith::ArithDialect,
                      tensor::TensorDialect, scf::SCFDialect>();
  RETURN_IF_ERROR(checkGraphSymbols(graph));
  OpBuilder builder(&context);
  Location loc = NameLoc::get(builder.getStringAttr(
      graph.name().empty() ? "graph" : graph.name()));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);

  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  RETURN_IF_ERROR(declareArguments(graph, builder, argTypes, argNames));
  // With symbolic sizes, their values for the call follow the inputs.
  const int symbolCount = graph.symbols_size();
  if (symbolCount)
    argTypes.push_back(RankedTensorType::get({symbolCount}, builder.getI64Type()));

  builder.setInsertionPointToEnd(module->getBody());
  auto func = builder.create<func::FuncOp>(
      loc, kGraphFunctionName, builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  ValueTable values;
  for (auto [i, name] : llvm::enumerate(argNames)) {
    // Parameters and inputs belong to the caller: never written in place.
    func.setArgAttr(i, "bufferization.writable", builder.getBoolAttr(false));
  }

  builder.setInsertionPointToStart(body);
  SymbolScope symbols;
  if (symbolCount) {
    func.setArgAttr(argNames.size(), "bufferization.writable", builder.getBoolAttr(false));
    Value table = body->getArgument(argNames.size());
    for (int i = 0; i < symbolCount; ++i) {
      // A data-dependent size's entry is its max: the node that computes
      // it binds it below.
      if (graph.symbols(i).data_dependent()) {
        symbols.declaredMax[graph.symbols(i).name()] = graph.symbols(i).max();
        continue;
      }
      Value position = builder.create<arith::ConstantIndexOp>(loc, i);
      Value value = builder.create<tensor::ExtractOp>(loc, table, position);
      symbols.values[graph.symbols(i).name()] =
          builder.create<arith::IndexCastOp>(loc, builder.getIndexType(), value);
    }
  }
  std::unordered_map<std::string, const v1::TensorType *> declaredTypes;
  for (const v1::Value &input : graph.inputs())
    declaredTypes[input.name()] = &input.type();
  std::unordered_map<std::string, const v1::TensorType *> parameterTypes;
  for (const v1::Parameter &param : graph.parameters())
    parameterTypes[param.value().name()] = &param.value().type();
  auto declaredType = [&](const std::string &name) -> const v1::TensorType * {
    auto it = declaredTypes.find(name);
    if (it != declaredTypes.end())
      return it->second;
    auto param = parameterTypes.find(name);
    return param == parameterTypes.end() ? nullptr : param->second;
  };
  for (auto [i, name] : llvm::enumerate(argNames)) {
    Value argument = body->getArgument(i);
    if (hasNoElements(typeOf(argument))) {
      // Inside, an empty argument has its declared shape (and no data).
      const v1::TensorType &declared =
          i < static_cast<size_t>(graph.parameters_size())
              ? graph.parameters(i).value().type()
              : graph.inputs(i - graph.parameters_size()).type();
      ASSIGN_OR_RETURN(RankedTensorType type,
                       convertTensorType(declared, context, name));
      argument = emptyTensor(builder, loc, type);
    }
    RETURN_IF_ERROR(defineValue(values, name, argument));
  }
  // u8 values live zero-extended to i16 inside the graph.
  std::unordered_map<std::string, bool> isUnsigned;
  auto argDtype = [&](int i) {
    return i < graph.parameters_size()
               ? graph.parameters(i).value().type().dtype()
               : graph.inputs(i - graph.parameters_size()).type().dtype();
  };
  for (auto [i, name] : llvm::enumerate(argNames)) {
    if (argDtype(i) != v1::DTYPE_U8)
      continue;
    isUnsigned[name] = true;
    values[name] = widenUnsigned(builder, loc, values[name]);
  }
  // Complex values are (real, imaginary) pairs; ops on them have their own
  // handlers (ComplexHandlers.cpp).
  ComplexValues complexValues;
  for (auto [i, name] : llvm::enumerate(argNames)) {
    if (!isComplex(argDtype(i)))
      continue;
    if (!typeOf(values[name]).hasStaticShape())
      return absl::UnimplementedError(absl::StrCat(
          "argument '", name, "' is a complex tensor of symbolic size; Kiln "
          "compiles complex tensors of static sizes only"));
    complexValues.insert(name);
  }
  const auto &handlers = opHandlers();
  // One node's ops, built at the end of the body: its results, or why it
  // cannot be imported.
  auto importNodeOps = [&](NodeImporter &importer, Operation *before)
      -> absl::StatusOr<SmallVector<Value>> {
    const v1::Node &node = importer.proto();
    const int i = importer.position();
    bool complex = touchesComplex(node, complexValues);
    const auto &table = complex ? complexHandlers() : handlers;
    auto handler = table.find(node.op());
    if (handler == table.end() && complex)
      return absl::UnimplementedError(absl::StrCat(
          "node ", i, " (", node.op(), "): Kiln has no form of this op for complex "
          "tensors (it has ", table.size(), "; docs/architecture.md, \"Complex "
          "tensors\", lists them)"));
    if (handler == table.end())
      return absl::UnimplementedError(absl::StrCat(
          "node ", i, ": unsupported op '", node.op(),
          "' (Kiln supports ", handlers.size(), " ATen ops; see docs)"));
    if (complex && !complexValuesStatic(node, values, complexValues))
      return importer.unimplemented("a complex tensor of symbolic size; Kiln "
                                    "compiles complex tensors of static sizes only");
    if (complex && symbolCount && touchesSymbolicSizes(node, values) &&
        !complexFormTakesSymbolicSizes(node.op()))
      return importer.unimplemented("a complex tensor meets a symbolic size; of the "
                                    "complex forms only the ops that read a complex "
                                    "value's truth (nonzero, any ...), masked_select "
                                    "and x[mask] take one");
    // The empty-tensor rules (EmptyTensors.h) and the handlers they stand
    // in for take static shapes.
    if (symbolCount && touchesSymbolicSizes(node, values) &&
        touchesEmptyTensors(node, values))
      return importer.unimplemented(
          "a tensor with no elements meets a symbolic size; Kiln compiles such "
          "a node for static sizes only");
    std::optional<SmallVector<Value>> perSample;
    if (symbolCount && !complex) {
      // A per-sample op over a symbolic batch: a loop of static imports.
      ASSIGN_OR_RETURN(perSample,
                       importPerSample(importer, handler->second, values, symbols));
    }
    if (symbolCount && !perSample && !importsSymbolicSizes(node.op()) &&
        touchesSymbolicSizes(node, values))
      return importer.unimplemented(
          "Kiln compiles this op for static sizes only, and it meets a symbolic "
          "one (docs/architecture.md, \"Variable sizes\", lists the ops that take them)");
    std::optional<SmallVector<Value>> resolved = std::move(perSample);
    if (!resolved && !complex) {
      ASSIGN_OR_RETURN(resolved, importOverEmptyTensors(importer, handlers));
    }
    if (!resolved && complex && touchesEmptyTensors(node, values) &&
        !complexPartsTakeEmptyTensors(node.op())) {
      // (The ops run on each part apply the real rules part by part.)
      ASSIGN_OR_RETURN(resolved, importOverEmptyTensors(importer, table));
    }
    SmallVector<Value> results;
    if (resolved) {
      results = std::move(*resolved);
    } else {
      ASSIGN_OR_RETURN(results, handler->second(importer));
      // An empty result beside non-empty ones (a split with a zero-sized
      // piece): nothing downstream reads the handler's op for it.
      for (int r = 0; r < node.outputs_size() && r < int(results.size()); ++r) {
        if (importer.resultLeftOut(r))
          continue;
        ASSIGN_OR_RETURN(RankedTensorType declared, importer.resultType(r));
        // (A result of symbolic size is the handler's, empty or not.)
        if (results[r] && declared.hasStaticShape() && hasNoElements(declared))
          results[r] = emptyTensor(builder, importer.loc(), declared);
      }
    }
    if (symbolCount)
      RETURN_IF_ERROR(checkSymbolicOps(importer, body, before));
    return results;
  };
  for (int i = 0; i < graph.nodes_size(); ++i) {
    const v1::Node &node = graph.nodes(i);
    if (symbolCount)
      RETURN_IF_ERROR(checkSymbolicAgreement(node, i, declaredType));
    NodeImporter importer(node, i, builder, values, symbolCount ? &symbols : nullptr);
    importer.setComplexValues(&complexValues);
    Operation *before = body->empty() ? nullptr : &body->back();
    absl::StatusOr<SmallVector<Value>> imported = importNodeOps(importer, before);
    if (options.keepUnsupportedNodes && absl::IsUnimplemented(imported.status())) {
      // Placement's mode: what the node built so far goes, and the node
      // stays as one op that says why it cannot be compiled.
      eraseOpsAfter(*body, before);
      builder.setInsertionPointToEnd(body);
      imported = unsupportedNode(importer, imported.status());
    }
    ASSIGN_OR_RETURN(SmallVector<Value> results, std::move(imported));
    RETURN_IF_ERROR(verifyResults(importer, results));
    if (static_cast<int>(results.size()) < node.outputs_size())
      return importer.error(absl::StrCat("declares ", node.outputs_size(),
                                         " outputs; the op has ", results.size()));
    for (int r = 0; r < node.outputs_size(); ++r) {
      // A handler leaves a result null when the op's result is an unused
      // placeholder (batch norm's empty saved statistics): it stays undefined,
      // as does a result the node leaves out (an unnamed output).
      if (!results[r] || importer.resultLeftOut(r))
        continue;
      // What the op computed, before a uint8 result's wrap: a selection's
      // row count is bound to the selection itself.
      Value computed = results[r];
      if (node.outputs(r).type().dtype() == v1::DTYPE_U8) {
        isUnsigned[node.outputs(r).name()] = true;
        results[r] = wrapUnsigned(builder, importer.loc(), results[r]);
      }
      ASSIGN_OR_RETURN(RankedTensorType declared, importer.resultType(r));
      if (results[r].getType() != declared)
        return importer.error(absl::StrCat("output ", r, " is declared with a type "
                                           "that differs from the op's"));
      RETURN_IF_ERROR(defineValue(values, node.outputs(r).name(), results[r]));
      declaredTypes[node.outputs(r).name()] = &node.outputs(r).type();
      if (isComplex(node.outputs(r).type().dtype()))
        complexValues.insert(node.outputs(r).name());
      if (symbolCount) {
        absl::Status bound = bindDataDependentSizes(
            builder, importer.loc(), graph, node.outputs(r).type(), computed, symbols);
        if (!bound.ok())
          return absl::IsUnimplemented(bound)
                     ? importer.unimplemented(std::string(bound.message()))
                     : importer.error(std::string(bound.message()));
      }
    }
    if (options.keepUnsupportedNodes)
      markNodeOps(*body, before, i);
  }

  SmallVector<Value> outputs;
  for (const std::string &name : graph.outputs()) {
    auto it = values.find(name);
    if (it == values.end())
      return absl::InvalidArgumentError(
          absl::StrCat("graph output '", name, "' names no value"));
    Value output = isUnsigned.count(name) ? narrowUnsigned(builder, loc, it->second)
                                          : it->second;
    if (auto type = declaredTypes.find(name);
        type != declaredTypes.end() && usesDataDependentSize(*type->second, graph.symbols())) {
      ASSIGN_OR_RETURN(output,
                       paddedOutput(builder, loc, graph, symbols, *type->second, output));
    } else if (hasNoElements(typeOf(output))) {
      output = emptyTensor(builder, loc, boundaryType(typeOf(output)));
    }
    outputs.push_back(output);
  }
  if (outputs.empty())
    return absl::InvalidArgumentError("graph has no outputs");
  // The data-dependent sizes' values, for the caller to trim the outputs.
  SmallVector<int64_t> maxima;
  if (dataDependentCount(graph.symbols()) > 0) {
    ASSIGN_OR_RETURN(Value computed,
                     dataDependentValues(builder, loc, graph, symbols, maxima));
    outputs.push_back(computed);
  }
  builder.create<func::ReturnOp>(loc, outputs);
  func.setType(builder.getFunctionType(argTypes, ValueRange(outputs).getTypes()));
  if (symbolCount) {
    // What kiln-bare-boundary needs to give each dynamic buffer its sizes:
    // the symbols' order, and each argument's and result's size expressions.
    SmallVector<Attribute> names, sizes;
    for (const v1::SymbolicDim &symbol : graph.symbols())
      names.push_back(builder.getStringAttr(symbol.name()));
    for (const v1::Parameter &param : graph.parameters())
      sizes.push_back(boundarySizes(builder, param.value().type()));
    for (const v1::Value &input : graph.inputs())
      sizes.push_back(boundarySizes(builder, input.type()));
    for (const std::string &name : graph.outputs()) {
      auto it = declaredTypes.find(name);
      // A padded output is a static buffer.
      sizes.push_back(it == declaredTypes.end() || hasNoElements(typeOf(values[name])) ||
                              usesDataDependentSize(*it->second, graph.symbols())
                          ? builder.getArrayAttr({})
                          : boundarySizes(builder, *it->second));
    }
    if (dataDependentCount(graph.symbols()) > 0)
      sizes.push_back(builder.getArrayAttr({}));
    func->setAttr("kiln.symbols", builder.getArrayAttr(names));
    func->setAttr("kiln.symbols_position",
                  builder.getI64IntegerAttr(static_cast<int64_t>(argNames.size())));
    func->setAttr("kiln.boundary_sizes", builder.getArrayAttr(sizes));
    if (!maxima.empty())
      func->setAttr(kDataDependentMaxAttr, builder.getDenseI64ArrayAttr(maxima));
  }

  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      absl::StrAppend(&diagnostics, diagnostics.empty() ? "" : "\n", diag.str());
      return success();
    });
    if (failed(verify(*module)))
      return absl::InvalidArgumentError(
          absl::StrCat("graph is inconsistent: ", diagnostics));
  }
  return module;
}

} // namespace kiln
