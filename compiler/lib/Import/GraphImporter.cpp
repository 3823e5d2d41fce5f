//===- GraphImporter.cpp - kiln.v1.Graph to the aten dialect --------------===//
//
// This file implements the importer: values and parameters become function
// arguments (read-only for bufferization), nodes become aten ops through the
// op handler table, and the result is verified before it is returned.
//
//===----------------------------------------------------------------------===//
#include "kiln/Import/GraphImporter.h"

#include "EmptyTensors.h"
#include "ImportContext.h"
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenDialect.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

namespace kiln {

Type elementTypeFor(v1::DType dtype, MLIRContext &context) {
  Builder b(&context);
  switch (dtype) {
  case v1::DTYPE_F32:
    return b.getF32Type();
  case v1::DTYPE_F64:
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

} // namespace

absl::StatusOr<OwningOpRef<ModuleOp>> importGraph(const v1::Graph &graph,
                                                  MLIRContext &context) {
  context.loadDialect<aten::AtenDialect, func::FuncDialect>();
  OpBuilder builder(&context);
  Location loc = NameLoc::get(builder.getStringAttr(
      graph.name().empty() ? "graph" : graph.name()));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);

  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  RETURN_IF_ERROR(declareArguments(graph, builder, argTypes, argNames));

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
  const auto &handlers = opHandlers();
  for (int i = 0; i < graph.nodes_size(); ++i) {
    const v1::Node &node = graph.nodes(i);
    auto handler = handlers.find(node.op());
    if (handler == handlers.end())
      return absl::UnimplementedError(absl::StrCat(
          "node ", i, ": unsupported op '", node.op(),
          "' (Kiln supports ", handlers.size(), " ATen ops; see docs)"));
    NodeImporter importer(node, i, builder, values);
    ASSIGN_OR_RETURN(std::optional<SmallVector<Value>> resolved,
                     importOverEmptyTensors(importer, handlers));
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
        if (results[r] && hasNoElements(declared))
          results[r] = emptyTensor(builder, importer.loc(), declared);
      }
    }
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
      if (node.outputs(r).type().dtype() == v1::DTYPE_U8) {
        isUnsigned[node.outputs(r).name()] = true;
        results[r] = wrapUnsigned(builder, importer.loc(), results[r]);
      }
      ASSIGN_OR_RETURN(RankedTensorType declared, importer.resultType(r));
      if (results[r].getType() != declared)
        return importer.error(absl::StrCat("output ", r, " is declared with a type "
                                           "that differs from the op's"));
      RETURN_IF_ERROR(defineValue(values, node.outputs(r).name(), results[r]));
    }
  }

  SmallVector<Value> outputs;
  for (const std::string &name : graph.outputs()) {
    auto it = values.find(name);
    if (it == values.end())
      return absl::InvalidArgumentError(
          absl::StrCat("graph output '", name, "' names no value"));
    Value output = isUnsigned.count(name) ? narrowUnsigned(builder, loc, it->second)
                                          : it->second;
    if (hasNoElements(typeOf(output)))
      output = emptyTensor(builder, loc, boundaryType(typeOf(output)));
    outputs.push_back(output);
  }
  if (outputs.empty())
    return absl::InvalidArgumentError("graph has no outputs");
  builder.create<func::ReturnOp>(loc, outputs);
  func.setType(builder.getFunctionType(argTypes, ValueRange(outputs).getTypes()));

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
