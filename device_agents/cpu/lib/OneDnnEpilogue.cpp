//===- OneDnnEpilogue.cpp - a call's epilogue on oneDNN and in loops ------===//
//
// This file implements EpiloguePostOps and applyEpilogue.
//
//===----------------------------------------------------------------------===//
#include "OneDnnEpilogue.h"

#include "OneDnnSupport.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <string_view>

namespace kiln::agent::onednn {

namespace {

using dnnl::memory;

/// The plain (row-major) tag of a rank.
memory::format_tag plainTag(int64_t rank) {
  using Tag = memory::format_tag;
  static constexpr Tag tags[] = {Tag::a, Tag::ab, Tag::abc, Tag::abcd,
                                 Tag::abcde};
  return tags[rank - 1];
}

/// oneDNN's eltwise algorithm and its alpha and beta for an activation.
struct Eltwise {
  dnnl::algorithm algorithm;
  float alpha = 0.0f, beta = 0.0f;
};

Eltwise eltwiseOf(const kiln_rt_epilogue &e) {
  switch (e.activation) {
  case KILN_RT_ACTIVATION_HARDSWISH:
    return {dnnl::algorithm::eltwise_hardswish};
  case KILN_RT_ACTIVATION_GELU:
    return {dnnl::algorithm::eltwise_gelu_erf};
  case KILN_RT_ACTIVATION_GELU_TANH:
    return {dnnl::algorithm::eltwise_gelu_tanh};
  default:
    throw dnnl::error(dnnl_invalid_arguments, "unknown epilogue activation");
  }
}

float activate(const kiln_rt_epilogue &e, float y) {
  switch (e.activation) {
  case KILN_RT_ACTIVATION_HARDSWISH:
    return y * std::min(std::max(y + 3.0f, 0.0f), 6.0f) / 6.0f;
  case KILN_RT_ACTIVATION_GELU:
    return 0.5f * y * (1.0f + std::erf(y * static_cast<float>(M_SQRT1_2)));
  case KILN_RT_ACTIVATION_GELU_TANH: {
    constexpr float kBeta = 0.7978845608028654f; // sqrt(2 / pi)
    return 0.5f * y *
           (1.0f + std::tanh(kBeta * (y + 0.044715f * y * y * y)));
  }
  default:
    return y;
  }
}

} // namespace

EpiloguePostOps::EpiloguePostOps(const kiln_rt_epilogue &e, int64_t rank,
                                 int64_t channelDim, int64_t channels)
    : epilogue(e) {
  tailResidual = e.has_residual;
  tailActivation = e.activation != KILN_RT_ACTIVATION_NONE;
  if (e.has_scale_shift) {
    memory::dims dims(rank, 1);
    dims[channelDim] = channels;
    perChannel = memory::desc(dims, memory::data_type::f32, plainTag(rank));
  }
  append(/*withTail=*/true);
}

void EpiloguePostOps::append(bool withTail) {
  ops = dnnl::post_ops();
  scaleIndex = shiftIndex = -1;
  residual = false;
  if (epilogue.has_scale_shift) {
    scaleIndex = ops.len();
    ops.append_binary(dnnl::algorithm::binary_mul, perChannel);
    shiftIndex = ops.len();
    ops.append_binary(dnnl::algorithm::binary_add, perChannel);
  }
  if (!withTail)
    return;
  if (tailResidual) {
    residual = true;
    ops.append_sum(1.0f);
  }
  if (tailActivation) {
    Eltwise eltwise = eltwiseOf(epilogue);
    ops.append_eltwise(1.0f, eltwise.algorithm, eltwise.alpha, eltwise.beta);
  }
}

void EpiloguePostOps::deferTail(const memory::desc &plainDst) {
  append(/*withTail=*/false);
  tailDst = plainDst;
  if (tailResidual) {
    dnnl::post_ops activation;
    if (tailActivation) {
      Eltwise eltwise = eltwiseOf(epilogue);
      activation.append_eltwise(1.0f, eltwise.algorithm, eltwise.alpha,
                                eltwise.beta);
    }
    dnnl::primitive_attr attributes;
    attributes.set_post_ops(activation);
    tail = dnnl::binary(dnnl::binary::primitive_desc(
        dnnl::binary::desc(dnnl::algorithm::binary_add, plainDst, plainDst,
                           plainDst),
        attributes, engine()));
  } else if (tailActivation) {
    Eltwise eltwise = eltwiseOf(epilogue);
    tail = dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                    eltwise.algorithm, plainDst, eltwise.alpha,
                                    eltwise.beta),
        engine()));
  }
}

void EpiloguePostOps::runTail(dnnl::stream &stream, float *output,
                              const EpilogueOperands &operands) const {
  if (!tail)
    return;
  memory dst = wrap(tailDst, output);
  if (tailResidual)
    tail.execute(stream, {{DNNL_ARG_SRC_0, dst},
                          {DNNL_ARG_SRC_1, wrap(tailDst, operands.residual)},
                          {DNNL_ARG_DST, dst}});
  else
    tail.execute(stream, {{DNNL_ARG_SRC, dst}, {DNNL_ARG_DST, dst}});
}

bool isReferenceImplementation(const dnnl::primitive_desc_base &pd) {
  return std::string_view(pd.impl_info_str()).starts_with("ref");
}

void warnIfReference(const dnnl::primitive_desc_base &pd, const char *what) {
  if (isReferenceImplementation(pd))
    spdlog::warn("oneDNN has only its reference kernel ({}) for a {} here; "
                 "it runs far slower than its jit kernels",
                 pd.impl_info_str(), what);
}

void EpiloguePostOps::attach(dnnl::primitive_attr &attributes) const {
  if (ops.len() > 0)
    attributes.set_post_ops(ops);
}

void EpiloguePostOps::addArguments(
    const EpilogueOperands &operands,
    std::unordered_map<int, memory> &arguments) const {
  // Assigned, not emplaced: a site reuses its argument map across calls.
  if (scaleIndex >= 0)
    arguments.insert_or_assign(
        DNNL_ARG_ATTR_MULTIPLE_POST_OP(scaleIndex) | DNNL_ARG_SRC_1,
        wrap(perChannel, operands.scale));
  if (shiftIndex >= 0)
    arguments.insert_or_assign(
        DNNL_ARG_ATTR_MULTIPLE_POST_OP(shiftIndex) | DNNL_ARG_SRC_1,
        wrap(perChannel, operands.shift));
}

void applyEpilogue(const kiln_rt_epilogue &e, const EpilogueOperands &operands,
                   float *output, int64_t outer, int64_t channels,
                   int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t at = (o * channels + c) * inner + i;
        float y = output[at];
        if (e.has_scale_shift)
          y = y * operands.scale[c] + operands.shift[c];
        if (e.has_residual)
          y += operands.residual[at];
        output[at] = activate(e, y);
      }
}

} // namespace kiln::agent::onednn
