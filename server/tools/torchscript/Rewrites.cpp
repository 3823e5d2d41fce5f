//===- Rewrites.cpp - non-core TorchScript ops -> core ATen ---------------===//
//
// This file implements Converter's rewrites of the ops TorchScript keeps but
// core ATen (and so Kiln's importer) does not have: linear, conv*d and
// _convolution, eval batch_norm, layer_norm and matmul.
//
//===----------------------------------------------------------------------===//
#include "Converter.h"

namespace kiln::torchscript {

// linear(input, weight, bias?) -> permute(weight) then addmm/mm, with views
// around it for inputs of rank > 2.
bool Converter::rewriteLinear(Node *node) {
  at::Tensor input = tensorOf(node->input(0));
  at::Tensor weight = tensorOf(node->input(1));
  at::Tensor result = tensorOf(node->output());
  bool hasBias = values.at(node->input(2)).isTensor();
  if (weight.dim() != 2 || input.dim() < 1 ||
      (hasBias && tensorOf(node->input(2)).dim() != 1))
    return false;
  std::string wt = freshName(node->output()->debugName() + ".wt");
  emit("aten.permute.default",
       {tensorArg("self", tensorName(node->input(1), node)),
        attrArg("dims", intsJson({1, 0}))},
       {{wt, weight.t()}});
  std::string x = tensorName(node->input(0), node);
  at::Tensor x2 = input.reshape({-1, input.size(-1)});
  if (input.dim() != 2) {
    std::string flat = freshName(node->output()->debugName() + ".in");
    emit("aten.view.default",
         {tensorArg("self", x), attrArg("size", intsJson(x2.sizes()))},
         {{flat, x2}});
    x = flat;
  }
  at::Tensor y2 = result.reshape({-1, result.size(-1)});
  std::string y = input.dim() == 2 ? node->output()->debugName()
                                   : freshName(node->output()->debugName() + ".mm");
  if (hasBias)
    emit("aten.addmm.default",
         {tensorArg("self", tensorName(node->input(2), node)), tensorArg("mat1", x),
          tensorArg("mat2", wt)},
         {{y, y2}});
  else
    emit("aten.mm.default", {tensorArg("self", x), tensorArg("mat2", wt)}, {{y, y2}});
  if (input.dim() != 2)
    emit("aten.view.default",
         {tensorArg("self", y), attrArg("size", intsJson(result.sizes()))},
         {{node->output()->debugName(), result}});
  names[node->output()] = node->output()->debugName();
  return true;
}

// conv1d/2d/3d and _convolution -> convolution.
bool Converter::rewriteConvolution(Node *node) {
  std::string kind = node->kind().toUnqualString();
  at::Tensor weight = tensorOf(node->input(1));
  int64_t spatial = weight.dim() - 2;
  std::vector<std::string> arguments = {
      tensorArg("input", tensorName(node->input(0), node)),
      tensorArg("weight", tensorName(node->input(1), node))};
  const c10::IValue &bias = values.at(node->input(2));
  arguments.push_back(bias.isTensor()
                          ? tensorArg("bias", tensorName(node->input(2), node))
                          : attrArg("bias", "{\"none\":{}}"));
  auto ints = [&](size_t i) {
    const c10::IValue &iv = values.at(node->input(i));
    if (!iv.isIntList())
      unsupported(describe(node) + ": padding '" +
                  (iv.isString() ? iv.toStringRef() : iv.tagKind()) +
                  "' is not supported; give explicit integers");
    std::vector<int64_t> v = iv.toIntVector();
    if (v.size() == 1 && spatial > 1)
      v.assign(spatial, v[0]);
    return v;
  };
  arguments.push_back(attrArg("stride", intsJson(ints(3))));
  arguments.push_back(attrArg("padding", intsJson(ints(4))));
  arguments.push_back(attrArg("dilation", intsJson(ints(5))));
  if (kind == "_convolution" || kind == "convolution") {
    arguments.push_back(
        attrArg("transposed", boolJson(values.at(node->input(6)).toBool())));
    arguments.push_back(attrArg("output_padding", intsJson(ints(7))));
    arguments.push_back(
        attrArg("groups", intJson(values.at(node->input(8)).toInt())));
  } else {
    arguments.push_back(attrArg("transposed", boolJson(false)));
    arguments.push_back(attrArg("output_padding",
                                intsJson(std::vector<int64_t>(spatial, 0))));
    arguments.push_back(
        attrArg("groups", intJson(values.at(node->input(6)).toInt())));
  }
  names[node->output()] = node->output()->debugName();
  emit("aten.convolution.default", std::move(arguments),
       {{node->output()->debugName(), tensorOf(node->output())}});
  return true;
}

// layer_norm(input, normalized_shape, weight?, bias?, eps, cudnn) ->
// native_layer_norm, whose mean and rstd keep the normalised dims as 1s.
bool Converter::rewriteLayerNorm(Node *node) {
  at::Tensor input = tensorOf(node->input(0));
  std::vector<int64_t> normalized = values.at(node->input(1)).toIntVector();
  if (normalized.size() > static_cast<size_t>(input.dim()))
    return false;
  std::vector<std::string> arguments = {
      tensorArg("input", tensorName(node->input(0), node)),
      attrArg("normalized_shape", intsJson(normalized))};
  const char *argNames[] = {"weight", "bias"};
  for (int i = 0; i < 2; ++i)
    arguments.push_back(
        values.at(node->input(2 + i)).isTensor()
            ? tensorArg(argNames[i], tensorName(node->input(2 + i), node))
            : attrArg(argNames[i], "{\"none\":{}}"));
  arguments.push_back(
      attrArg("eps", floatJson(values.at(node->input(4)).toDouble())));
  std::vector<int64_t> statShape(input.sizes().begin(), input.sizes().end());
  for (size_t i = 0; i < normalized.size(); ++i)
    statShape[statShape.size() - 1 - i] = 1;
  at::Tensor stat = at::empty(statShape, input.options());
  std::string out = node->output()->debugName();
  emit("aten.native_layer_norm.default", std::move(arguments),
       {{out, tensorOf(node->output())},
        {freshName(out + ".mean"), stat},
        {freshName(out + ".rstd"), stat}});
  names[node->output()] = out;
  return true;
}

std::string Converter::viewAs(const std::string &name, const at::Tensor &shaped,
                              Node *node) {
  std::string view = freshName(node->output()->debugName() + ".view");
  emit("aten.view.default",
       {tensorArg("self", name), attrArg("size", intsJson(shaped.sizes()))},
       {{view, shaped}});
  return view;
}

// matmul of operands of rank >= 2 -> mm, or bmm over the broadcast batch
// dims (operands expanded and flattened to rank 3, the result viewed back).
bool Converter::rewriteMatmul(Node *node) {
  at::Tensor a = tensorOf(node->input(0));
  at::Tensor b = tensorOf(node->input(1));
  at::Tensor result = tensorOf(node->output());
  if (a.dim() < 2 || b.dim() < 2)
    return false;
  std::string out = node->output()->debugName();
  std::string x = tensorName(node->input(0), node);
  std::string y = tensorName(node->input(1), node);
  names[node->output()] = out;
  if (b.dim() == 2) {
    at::Tensor a2 = a.reshape({-1, a.size(-1)});
    if (a.dim() != 2)
      x = viewAs(x, a2, node);
    at::Tensor r2 = result.reshape({-1, result.size(-1)});
    std::string mm = a.dim() == 2 ? out : freshName(out + ".mm");
    emit("aten.mm.default", {tensorArg("self", x), tensorArg("mat2", y)},
         {{mm, r2}});
    if (a.dim() != 2)
      emit("aten.view.default",
           {tensorArg("self", mm), attrArg("size", intsJson(result.sizes()))},
           {{out, result}});
    return true;
  }
  std::vector<int64_t> batch(result.sizes().begin(), result.sizes().end() - 2);
  int64_t count = 1;
  for (int64_t d : batch)
    count *= d;
  auto toRank3 = [&](std::string name, const at::Tensor &t) {
    std::vector<int64_t> full = batch;
    full.push_back(t.size(-2));
    full.push_back(t.size(-1));
    at::Tensor expanded = t.expand(full).contiguous();
    if (!t.sizes().equals(full)) {
      std::string e = freshName(out + ".expand");
      emit("aten.expand.default",
           {tensorArg("self", name), attrArg("size", intsJson(full))},
           {{e, expanded}});
      name = e;
    }
    if (expanded.dim() != 3)
      name = viewAs(name, expanded.reshape({count, t.size(-2), t.size(-1)}), node);
    return name;
  };
  x = toRank3(x, a);
  y = toRank3(y, b);
  at::Tensor r3 = result.reshape({count, result.size(-2), result.size(-1)});
  std::string bmm = result.dim() == 3 ? out : freshName(out + ".bmm");
  emit("aten.bmm.default", {tensorArg("self", x), tensorArg("mat2", y)},
       {{bmm, r3}});
  if (result.dim() != 3)
    emit("aten.view.default",
         {tensorArg("self", bmm), attrArg("size", intsJson(result.sizes()))},
         {{out, result}});
  return true;
}

// batch_norm(input, weight?, bias?, mean?, var?, training, momentum, eps,
// cudnn) in eval -> _native_batch_norm_legit_no_training.
bool Converter::rewriteBatchNorm(Node *node) {
  if (values.at(node->input(5)).toBool())
    unsupported(describe(node) + ": batch norm in training mode; call .eval() "
                "before saving, or Kiln cannot freeze its statistics");
  std::vector<std::string> arguments;
  const char *argNames[] = {"input", "weight", "bias", "running_mean", "running_var"};
  for (int i = 0; i < 5; ++i) {
    if (values.at(node->input(i)).isTensor())
      arguments.push_back(tensorArg(argNames[i], tensorName(node->input(i), node)));
    else if (i >= 3)
      unsupported(describe(node) + ": batch norm without running statistics");
    else
      arguments.push_back(attrArg(argNames[i], "{\"none\":{}}"));
  }
  arguments.push_back(
      attrArg("momentum", floatJson(values.at(node->input(6)).toDouble())));
  arguments.push_back(
      attrArg("eps", floatJson(values.at(node->input(7)).toDouble())));
  std::string out = node->output()->debugName();
  at::Tensor result = tensorOf(node->output());
  at::Tensor empty = at::empty({0}, result.options());
  emit("aten._native_batch_norm_legit_no_training.default", std::move(arguments),
       {{out, result},
        {freshName(out + ".mean"), empty},
        {freshName(out + ".invstd"), empty}});
  names[node->output()] = out;
  return true;
}


} // namespace kiln::torchscript
