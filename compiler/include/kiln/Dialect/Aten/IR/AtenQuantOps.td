//===- AtenQuantOps.td - affine quantization ops -----------*- tablegen -*-===//
//
// This file defines the aten ops of affine quantization: quantize to an
// integer type and dequantize back, per tensor or per channel. They are
// what PT2E quantization leaves in an exported graph
// (quantized_decomposed.{quantize,dequantize}_per_{tensor,channel}), kept
// as one op each so that passes and kernel libraries can see a quantized
// operand; kiln-decompose-aten rewrites them into elementwise aten ops in
// eager's arithmetic.
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

#endif // KILN_DIALECT_ATEN_ATENQUANTOPS_TD
