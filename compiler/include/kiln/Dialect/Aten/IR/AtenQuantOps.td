//===- AtenQuantOps.td - affine quantization ops -----------*- tablegen -*-===//
//
// This file defines the aten ops of affine quantization: quantize to an
// integer type and dequantize back, per tensor or per channel, what PT2E
// quantization leaves in an exported graph
// (quantized_decomposed.{quantize,dequantize}_per_{tensor,channel}), and
// the fake quantizer of quantization-aware training. Each is kept as one
// op so that passes and kernel libraries can see a quantized operand;
// kiln-decompose-aten rewrites them into elementwise aten ops in eager's
// arithmetic.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_ATEN_ATENQUANTOPS_TD
#define KILN_DIALECT_ATEN_ATENQUANTOPS_TD

def Aten_QuantizeOp : Aten_Op<"quantize", [Pure]> {
  let summary = "Affine quantization of a float tensor to an integer type.";
  let description = [{
    `quantized_decomposed.quantize_per_tensor` (`.default` and `.tensor`)
    and `quantize_per_channel`:

        q = clamp(round(x * inv_scale) + zero_point, quant_min, quant_max)

    converted to the result's integer type, rounding half to even. Without
    `axis` the op is per tensor: `scale` and `zero_point` are 0-d,
    inv_scale is `1.0 / scale` in f64 (a Python float), and the arithmetic
    is f32. With `axis` it is per channel: `scale` and `zero_point` are 1-d
    with one entry per slice of `input` along `axis`, inv_scale is
    `1.0 / scale` in the scales' type, and the arithmetic is in the
    promoted type of f32 and the scales.

    Example:
    ```mlir
    %q = aten.quantize %x, %s, %zp {quant_min = -128 : i64, quant_max = 127 : i64}
        : (tensor<2x3xf32>, tensor<f64>, tensor<i64>) -> tensor<2x3xi8>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, AnyStaticShapeTensor:$scale,
                   AnyStaticShapeTensor:$zero_point, I64Attr:$quant_min,
                   I64Attr:$quant_max, OptionalAttr<I64Attr>:$axis);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $zero_point attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_DequantizeOp : Aten_Op<"dequantize", [Pure]> {
  let summary = "Affine dequantization of an integer tensor to a float type.";
  let description = [{
    `quantized_decomposed.dequantize_per_tensor` (`.default` and `.tensor`)
    and `dequantize_per_channel`. Without `axis` the op is per tensor:

        x = (q.to(out) - zero_point) * scale

    with `scale` (read as f64) and `zero_point` (read as i64) 0-d, each step
    in the result's float type (f16 and bf16 multiply in f32, then round
    once). With `axis` it is per channel: `scale` and the optional
    `zero_point` are 1-d with one entry per slice along `axis`, and

        x = ((q - zero_point) * scale).to(out)

    each step in PyTorch's promoted type; without a zero point,
    `(q * scale).to(out)`.

    Example:
    ```mlir
    %x = aten.dequantize %q, %s, zero_point %zp
        : (tensor<2x3xi8>, tensor<f64>, tensor<i64>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, AnyStaticShapeTensor:$scale,
                   Optional<AnyStaticShapeTensor>:$zero_point,
                   OptionalAttr<I64Attr>:$axis);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale (`,` `zero_point` $zero_point^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_FakeQuantizeOp : Aten_Op<"fake_quantize", [Pure]> {
  let summary = "Quantize and dequantize in one step, with the in-range mask.";
  let description = [{
    `aten.fake_quantize_per_tensor_affine` (scalar and tensor qparams),
    `fake_quantize_per_channel_affine` and their `_cachemask` forms, as
    ATen's CPU kernels compute them:

        inv_scale = 1.0f / scale            (in f32)
        qval      = round(x * inv_scale) + zero_point
        result    = (clamp(qval, quant_min, quant_max) - zero_point) * scale
        mask      = quant_min <= qval <= quant_max

    with NaN clamping to quant_min (as fmax does). `x * inv_scale` is in f64
    for f64 inputs, else f32. Without `axis` the op is per tensor: `scale`
    and `zero_point` are 0-d, the zero point is read as i64 and the result
    computed in f32. With `axis` it is per channel: one entry per slice
    along `axis`; an integer zero point is read as i32 and added after
    rounding, a float one (the learnable fake quantizers') before, rounding
    in f32; the result is computed in f64. `enabled` (QAT's
    `fake_quant_enabled`, 0-d) passes `x` through with a full mask when it
    is 0. The result has the input's type; the mask is i1.

    Example:
    ```mlir
    %y, %m = aten.fake_quantize %x, %s, %zp {quant_min = 0 : i64, quant_max = 255 : i64}
        : (tensor<2x3xf32>, tensor<f64>, tensor<i64>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, AnyStaticShapeTensor:$scale,
                   AnyStaticShapeTensor:$zero_point,
                   Optional<AnyStaticShapeTensor>:$enabled, I64Attr:$quant_min,
                   I64Attr:$quant_max, OptionalAttr<I64Attr>:$axis);
  let results = (outs AnyStaticShapeTensor:$result, AnyStaticShapeTensor:$mask);
  let assemblyFormat = [{
    $input `,` $scale `,` $zero_point (`,` `enabled` $enabled^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // KILN_DIALECT_ATEN_ATENQUANTOPS_TD
