//===- Converter.cpp - TorchScript graph -> kiln.v1.Graph JSON ------------===//
//
// This file implements Converter: a walk over a frozen, inlined TorchScript
// graph that runs every node on the example inputs (so every value has a
// static type and every size computation a known value), turns tensor
// constants into parameters, folds scalar values into attributes, resolves
// ifs on shapes, and emits each ATen op under its schema names.
//
//===----------------------------------------------------------------------===//
#include "Converter.h"

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>

namespace kiln::torchscript {

[[noreturn]] void invalid(const std::string &message) {
  throw ImportError{2, message};
}
[[noreturn]] void unsupported(const std::string &message) {
  throw ImportError{3, message};
}

std::string describe(const Node *node) {
  std::string out = std::string(node->kind().toQualString());
  if (node->outputs().size())
    out += " (value %" + node->output(0)->debugName() + ")";
  return "TorchScript node " + out;
}

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else
      out += c;
  }
  return out + "\"";
}

std::string jsonDouble(double d) {
  if (std::isnan(d))
    return "\"NaN\"";
  if (std::isinf(d))
    return d > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

const char *dtypeName(c10::ScalarType t) {
  switch (t) {
  case c10::kFloat: return "DTYPE_F32";
  case c10::kDouble: return "DTYPE_F64";
  case c10::kHalf: return "DTYPE_F16";
  case c10::kBFloat16: return "DTYPE_BF16";
  case c10::kChar: return "DTYPE_I8";
  case c10::kShort: return "DTYPE_I16";
  case c10::kInt: return "DTYPE_I32";
  case c10::kLong: return "DTYPE_I64";
  case c10::kByte: return "DTYPE_U8";
  case c10::kBool: return "DTYPE_BOOL";
  default: return nullptr;
  }
}

std::string typeJson(const at::Tensor &t, const std::string &what) {
  const char *dtype = dtypeName(t.scalar_type());
  if (!dtype)
    unsupported(what + " has dtype " + std::string(c10::toString(t.scalar_type())) +
                ", which Kiln does not support");
  std::string out = std::string("{\"dtype\":\"") + dtype + "\",\"shape\":[";
  for (int64_t i = 0; i < t.dim(); ++i)
    out += (i ? "," : "") + std::to_string(t.size(i));
  return out + "]}";
}

std::string intsJson(c10::IntArrayRef values) {
  std::string out = "{\"ints\":{\"values\":[";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? "," : "") + std::to_string(values[i]);
  return out + "]}}";
}

std::string boolJson(bool b) { return b ? "{\"b\":true}" : "{\"b\":false}"; }
std::string intJson(int64_t i) { return "{\"i\":\"" + std::to_string(i) + "\"}"; }
std::string floatJson(double f) { return "{\"f\":" + jsonDouble(f) + "}"; }

std::string Converter::freshName(const std::string &base) {
  return base + ".kiln" + std::to_string(counter++);
}

std::string Converter::tensorName(Value *v, Node *user) {
  auto it = names.find(v);
  if (it == names.end())
    unsupported(describe(user) + " reads %" + v->debugName() +
                ", a tensor Kiln did not convert");
  return it->second;
}

void Converter::addParameter(Value *v, const at::Tensor &t) {
  std::string name = v->debugName();
  at::Tensor dense = t.contiguous();
  std::string path = outDir + "/param_" + std::to_string(parameters.size()) + ".bin";
  std::ofstream file(path, std::ios::binary);
  file.write(static_cast<const char *>(dense.data_ptr()),
             static_cast<std::streamsize>(dense.nbytes()));
  if (!file)
    throw std::runtime_error("cannot write " + path);
  parameters.push_back("{\"value\":{\"name\":" + jsonString(name) + ",\"type\":" +
                       typeJson(dense, "weight %" + v->debugName()) + "}}");
  names[v] = name;
}

void Converter::evaluate(Node *node) {
  if (node->kind() == c10::prim::Constant) {
    std::optional<c10::IValue> iv = torch::jit::toIValue(node->output());
    if (!iv)
      unsupported(describe(node) + ": a constant libtorch cannot read");
    values[node->output()] = *iv;
    return;
  }
  // List and tuple plumbing: libtorch's interpreter builds these itself.
  c10::Symbol kind = node->kind();
  if (kind == c10::prim::ListConstruct) {
    c10::impl::GenericList list(
        node->output()->type()->expectRef<c10::ListType>().getElementType());
    for (Value *in : node->inputs())
      list.push_back(values.at(in));
    values[node->output()] = list;
    return;
  }
  if (kind == c10::prim::TupleConstruct) {
    std::vector<c10::IValue> elements;
    for (Value *in : node->inputs())
      elements.push_back(values.at(in));
    values[node->output()] = c10::ivalue::Tuple::create(std::move(elements));
    return;
  }
  if (kind == c10::prim::ListUnpack || kind == c10::prim::TupleUnpack) {
    const c10::IValue &packed = values.at(node->input());
    std::vector<c10::IValue> elements;
    if (packed.isList())
      for (const c10::IValue &e : packed.toListRef())
        elements.push_back(e);
    else
      elements = packed.toTupleRef().elements().vec();
    if (elements.size() != node->outputs().size())
      invalid(describe(node) + " unpacks " + std::to_string(elements.size()) +
              " values into " + std::to_string(node->outputs().size()));
    for (size_t i = 0; i < elements.size(); ++i)
      values[node->output(i)] = elements[i];
    return;
  }
  if (kind == c10::prim::RaiseException) {
    std::string message = "an exception";
    if (node->inputs().size() && values.at(node->input(0)).isString())
      message = values.at(node->input(0)).toStringRef();
    invalid(describe(node) + ": the module raises '" + message +
            "' for the stated input types");
  }
  torch::jit::Stack stack;
  for (Value *in : node->inputs())
    stack.push_back(values.at(in));
  std::optional<torch::jit::Operation> op;
  try {
    op.emplace(node->getOperation());
  } catch (const std::exception &) {
    unsupported(describe(node) + ": libtorch has no kernel for it");
  }
  try {
    (*op)(stack);
  } catch (const c10::Error &e) {
    std::string what = e.what_without_backtrace();
    invalid(describe(node) + " failed on the stated input types: " +
            what.substr(0, what.find('\n')));
  }
  if (stack.size() != node->outputs().size())
    unsupported(describe(node) + " returned an unexpected number of values");
  for (size_t i = 0; i < stack.size(); ++i)
    values[node->output(i)] = stack[i];
}

std::string Converter::attributeJson(const c10::IValue &iv,
                                     const c10::Argument &arg, Node *node) {
  c10::TypeKind kind = arg.real_type()->kind();
  if (auto opt = arg.real_type()->cast<c10::OptionalType>())
    kind = opt->getElementType()->kind();
  if (iv.isNone())
    return "{\"none\":{}}";
  if (kind == c10::TypeKind::ScalarTypeType && iv.isInt()) {
    const char *d = dtypeName(static_cast<c10::ScalarType>(iv.toInt()));
    if (!d)
      unsupported(describe(node) + ": dtype argument Kiln does not support");
    return std::string("{\"dtype\":\"") + d + "\"}";
  }
  if (iv.isBool())
    return boolJson(iv.toBool());
  if (iv.isInt())
    return intJson(iv.toInt());
  if (iv.isDouble())
    return floatJson(iv.toDouble());
  if (iv.isString())
    return "{\"s\":" + jsonString(iv.toStringRef()) + "}";
  if (iv.isIntList())
    return intsJson(iv.toIntVector());
  if (iv.isDoubleList()) {
    std::string out = "{\"floats\":{\"values\":[";
    std::vector<double> v = iv.toDoubleVector();
    for (size_t i = 0; i < v.size(); ++i)
      out += (i ? "," : "") + jsonDouble(v[i]);
    return out + "]}}";
  }
  if (iv.isBoolList()) {
    std::vector<int64_t> v;
    for (bool b : iv.toBoolList())
      v.push_back(b);
    return intsJson(v);
  }
  unsupported(describe(node) + ": argument '" + arg.name() + "' is a " +
              iv.tagKind() + ", which Kiln graphs cannot carry");
}

void Converter::emit(const std::string &op, std::vector<std::string> arguments,
                     const std::vector<std::pair<std::string, at::Tensor>> &outputs) {
  std::string out = "{\"op\":" + jsonString(op) + ",\"arguments\":[";
  for (size_t i = 0; i < arguments.size(); ++i)
    out += (i ? "," : "") + arguments[i];
  out += "],\"outputs\":[";
  for (size_t i = 0; i < outputs.size(); ++i)
    out += std::string(i ? "," : "") + "{\"name\":" + jsonString(outputs[i].first) +
           ",\"type\":" + typeJson(outputs[i].second, "value " + outputs[i].first) + "}";
  nodes.push_back(out + "]}");
}

void Converter::emitGeneric(Node *node, const std::string &op) {
  const c10::FunctionSchema &schema = node->schema();
  std::vector<std::string> arguments;
  for (size_t i = 0; i < schema.arguments().size() && i < node->inputs().size(); ++i) {
    const c10::Argument &arg = schema.arguments()[i];
    Value *in = node->input(i);
    const c10::IValue &iv = values.at(in);
    c10::TypeKind kind = arg.real_type()->kind();
    if (auto opt = arg.real_type()->cast<c10::OptionalType>())
      kind = opt->getElementType()->kind();
    // Where a tensor lives is not what it is: Kiln omits these.
    if (kind == c10::TypeKind::DeviceObjType || kind == c10::TypeKind::LayoutType ||
        kind == c10::TypeKind::MemoryFormatType || arg.name() == "pin_memory")
      continue;
    if (iv.isTensor()) {
      arguments.push_back(tensorArg(arg.name(), tensorName(in, node)));
    } else if (iv.isTensorList()) {
      auto it = tensorLists.find(in);
      if (it == tensorLists.end())
        unsupported(describe(node) + ": tensor list '" + arg.name() +
                    "' is not built by a list construct");
      for (const std::string &n : it->second)
        arguments.push_back(tensorArg(arg.name(), n));
    } else {
      arguments.push_back(attrArg(arg.name(), attributeJson(iv, arg, node)));
    }
  }
  std::vector<std::pair<std::string, at::Tensor>> outputs;
  for (Value *out : node->outputs()) {
    const c10::IValue &iv = values.at(out);
    if (!iv.isTensor())
      unsupported(describe(node) + " returns a " + iv.tagKind() +
                  " next to tensors; Kiln values are tensors only");
    names[out] = out->debugName();
    outputs.emplace_back(out->debugName(), iv.toTensor());
  }
  emit(op, std::move(arguments), outputs);
}


void Converter::markStatic(Node *node) {
  for (Value *out : node->outputs())
    if (values.at(out).isTensor() || values.at(out).isTensorList())
      return;
  c10::Symbol kind = node->kind();
  // Ops that read a tensor's metadata, never its data.
  static const std::unordered_set<std::string> metadata = {
      "aten::size", "aten::dim", "aten::numel", "aten::len", "prim::dtype",
      "prim::device", "prim::layout", "aten::__is__", "aten::__isnot__",
      "prim::is_cuda"};
  bool isStatic = kind == c10::prim::Constant ||
                  metadata.count(kind.toQualString()) != 0;
  if (!isStatic) {
    isStatic = true;
    for (Value *in : node->inputs())
      isStatic &= staticValues.count(in) != 0;
  }
  if (isStatic)
    for (Value *out : node->outputs())
      staticValues.insert(out);
}

// An if whose condition depends on shapes and constants only (the rank and
// size checks scripted modules make) is resolved: the taken branch is
// converted in its place. A condition on tensor data is control flow Kiln
// cannot compile.
void Converter::convertIf(Node *node) {
  Value *condition = node->input(0);
  if (!staticValues.count(condition))
    unsupported(describe(node) + ": control flow on tensor data left after "
                "freezing; Kiln compiles straight-line graphs (trace the "
                "module, or make the condition a constant)");
  torch::jit::Block *taken = node->blocks()[values.at(condition).toBool() ? 0 : 1];
  for (Node *inner : taken->nodes())
    convertNode(inner);
  for (size_t i = 0; i < node->outputs().size(); ++i) {
    Value *from = taken->outputs()[i];
    Value *to = node->output(i);
    values[to] = values.at(from);
    if (auto it = names.find(from); it != names.end())
      names[to] = it->second;
    if (auto it = tensorLists.find(from); it != tensorLists.end())
      tensorLists[to] = it->second;
    if (staticValues.count(from))
      staticValues.insert(to);
  }
}

void Converter::convertNode(Node *node) {
  if (node->kind() == c10::prim::If)
    return convertIf(node);
  if (!node->blocks().empty())
    unsupported(describe(node) + ": control flow (" +
                node->kind().toQualString() + ") left after freezing; Kiln "
                "compiles straight-line graphs (trace the module, or make the "
                "trip count a constant)");
  evaluate(node);
  markStatic(node);
  c10::Symbol kind = node->kind();
  if (kind == c10::prim::Constant) {
    const c10::IValue &iv = values.at(node->output());
    if (iv.isTensor())
      addParameter(node->output(), iv.toTensor());
    return;
  }
  if (kind == c10::prim::ListConstruct || kind == c10::prim::TupleConstruct) {
    std::vector<std::string> elements;
    for (Value *in : node->inputs())
      if (values.at(in).isTensor())
        elements.push_back(tensorName(in, node));
    // A tuple mixing tensors and scalars is only a problem where it is
    // used (a returned int is reported by the output walk).
    if (!elements.empty() && elements.size() == node->inputs().size())
      tensorLists[node->output()] = std::move(elements);
    return;
  }
  if (kind == c10::prim::ListUnpack || kind == c10::prim::TupleUnpack) {
    auto it = tensorLists.find(node->input());
    for (size_t i = 0; i < node->outputs().size(); ++i)
      if (values.at(node->output(i)).isTensor()) {
        if (it == tensorLists.end())
          unsupported(describe(node) + " unpacks tensors Kiln did not convert");
        names[node->output(i)] = it->second.at(i);
      }
    return;
  }
  bool producesTensor = false;
  for (Value *out : node->outputs())
    producesTensor |= values.at(out).isTensor() || values.at(out).isTensorList();
  // Size arithmetic and other scalar computations are folded: their values
  // are known from the example run and become attributes of their users.
  if (!producesTensor)
    return;
  if (!kind.is_aten() || !node->maybeSchema())
    unsupported(describe(node) + ": Kiln converts ATen ops only");
  const c10::FunctionSchema &schema = node->schema();
  std::string opName = kind.toUnqualString();
  const std::string &overload = schema.overload_name();
  if (node->outputs().size() == 1 && values.at(node->output()).isTensorList())
    unsupported(describe(node) + " returns a tensor list");

  // Identities in inference.
  if (opName == "dropout" || opName == "dropout_" || opName == "feature_dropout" ||
      opName == "alpha_dropout" || opName == "contiguous" || opName == "detach" ||
      opName == "clone") {
    if (opName.find("dropout") != std::string::npos &&
        values.at(node->input(2)).toBool())
      unsupported(describe(node) + ": dropout in training mode; call .eval()");
    names[node->output()] = tensorName(node->input(0), node);
    return;
  }
  if (opName == "linear" && rewriteLinear(node))
    return;
  if ((opName == "conv1d" || opName == "conv2d" || opName == "conv3d" ||
       opName == "_convolution") &&
      rewriteConvolution(node))
    return;
  if (opName == "batch_norm" && rewriteBatchNorm(node))
    return;
  if (opName == "layer_norm" && rewriteLayerNorm(node))
    return;
  if (opName == "matmul" && rewriteMatmul(node))
    return;
  if (opName == "reshape" || opName == "view" || opName == "flatten" ||
      opName == "_reshape_alias" || opName == "view_as" || opName == "reshape_as") {
    at::Tensor result = tensorOf(node->output());
    names[node->output()] = node->output()->debugName();
    emit("aten.view.default",
         {tensorArg("self", tensorName(node->input(0), node)),
          attrArg("size", intsJson(result.sizes()))},
         {{node->output()->debugName(), result}});
    return;
  }
  // An in-place op RemoveMutation could not make functional: its functional
  // form, and later reads of the mutated tensor see the result.
  bool inPlace = opName.size() > 1 && opName.back() == '_' && opName[0] != '_';
  if (inPlace)
    opName.pop_back();
  emitGeneric(node, "aten." + opName + "." + (overload.empty() ? "default" : overload));
  if (inPlace && node->inputs().size() && values.at(node->input(0)).isTensor())
    names[node->input(0)] = names[node->output()];
}

std::string Converter::run(torch::jit::Graph &graph,
                           const std::vector<at::Tensor> &examples,
                           const std::string &name) {
  std::vector<Value *> graphInputs;
  for (Value *in : graph.inputs())
    if (!in->type()->cast<c10::ClassType>())
      graphInputs.push_back(in);
    else
      values[in] = c10::IValue();
  if (graphInputs.size() != examples.size())
    invalid("the module's forward takes " + std::to_string(graphInputs.size()) +
            " input(s) but " + std::to_string(examples.size()) +
            " input type(s) were given");
  for (size_t i = 0; i < graphInputs.size(); ++i) {
    Value *in = graphInputs[i];
    if (!in->type()->cast<c10::TensorType>())
      unsupported("forward input '" + in->debugName() + "' is a " +
                  in->type()->str() + "; Kiln inputs are tensors");
    values[in] = examples[i];
    std::string n = in->debugName();
    names[in] = n;
    inputs.push_back("{\"name\":" + jsonString(n) + ",\"type\":" +
                     typeJson(examples[i], "input " + n) + "}");
  }
  for (Node *node : graph.nodes())
    convertNode(node);
  // The return value: a tensor, or a (nested) tuple/list of tensors, flattened.
  std::vector<std::string> outputs;
  std::function<void(Value *)> collect = [&](Value *v) {
    const c10::IValue &iv = values.at(v);
    if (iv.isTensor()) {
      outputs.push_back(tensorName(v, graph.return_node()));
      return;
    }
    Node *producer = v->node();
    if (producer->kind() == c10::prim::TupleConstruct ||
        producer->kind() == c10::prim::ListConstruct) {
      for (Value *in : producer->inputs())
        collect(in);
      return;
    }
    unsupported("the module returns a value of type " + iv.tagKind() +
                " (%" + v->debugName() +
                "); Kiln outputs are tensors or tuples of tensors");
  };
  for (Value *out : graph.outputs())
    collect(out);
  auto join = [](const std::vector<std::string> &items) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i)
      out += (i ? "," : "") + items[i];
    return out;
  };
  std::vector<std::string> quoted;
  for (const std::string &o : outputs)
    quoted.push_back(jsonString(o));
  return "{\"name\":" + jsonString(name) + ",\"inputs\":[" + join(inputs) +
         "],\"parameters\":[" + join(parameters) + "],\"nodes\":[" + join(nodes) +
         "],\"outputs\":[" + join(quoted) + "]}\n";
}


} // namespace kiln::torchscript
