//===- AtenOps.td - ATen dialect operations ----------------*- tablegen -*-===//
//
// This file defines the operations of the `aten` dialect.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_ATEN_ATENOPS_TD
#define KILN_DIALECT_ATEN_ATENOPS_TD

include "kiln/Dialect/Aten/IR/AtenBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Aten_ConstantOp : Aten_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "A literal tensor (scalar arguments become 0-d constants).";
  let description = [{
    Materialises a literal tensor. The importer uses it for scalar operands of
    ATen ops (`aten.mul.Tensor(x, 0.5)`) as 0-d tensors, which broadcast.

    Example:
    ```mlir
    %0 = aten.constant dense<5.000000e-01> : tensor<f32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "attr-dict $value";
  // A splat of `value` in `element` (an integer truncated toward zero and
  // saturated, a bool nonzero), of `shape` (0-d by default).
  let builders = [OpBuilder<(ins "::mlir::Type":$element, "double":$value,
                                 CArg<"::llvm::ArrayRef<int64_t>", "{}">:$shape)>];
  // Folds to its value: the greedy rewrite driver identifies constants by
  // their folded value, and without a folder took every constant of one
  // type for the same one and merged them.
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Aten_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Aten_Op<mnemonic, !listconcat([Pure], traits)> {
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_AddOp : Aten_BinaryOp<"add"> {
  let summary = "lhs + alpha * rhs, with broadcasting.";
  let description = [{
    `aten.add.Tensor` and `aten.add.Scalar`. Operands broadcast to the result
    shape by PyTorch's rules and convert to the result element type.

    Example:
    ```mlir
    %0 = aten.add %a, %b {alpha = 1.0 : f64}
        : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                   DefaultValuedAttr<F64Attr, "1.0">:$alpha);
}

def Aten_SubOp : Aten_BinaryOp<"sub"> {
  let summary = "lhs - alpha * rhs, with broadcasting.";
  let description = [{
    `aten.sub.Tensor` and `aten.sub.Scalar`.

    Example:
    ```mlir
    %0 = aten.sub %a, %b : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                   DefaultValuedAttr<F64Attr, "1.0">:$alpha);
}

def Aten_MulOp : Aten_BinaryOp<"mul"> {
  let summary = "lhs * rhs, with broadcasting.";
  let description = [{
    `aten.mul.Tensor` and `aten.mul.Scalar`.

    Example:
    ```mlir
    %0 = aten.mul %a, %b : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
}

def Aten_DivOp : Aten_BinaryOp<"div"> {
  let summary = "True division lhs / rhs, with broadcasting.";
  let description = [{
    `aten.div.Tensor` and `aten.div.Scalar` (no rounding mode). The result
    element type is floating point.

    Example:
    ```mlir
    %0 = aten.div %a, %b : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
}

class Aten_UnaryOp<string mnemonic, string summaryText>
    : Aten_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = summaryText;
  let description = [{
    Elementwise; operand and result have the same type.

    Example:
    ```mlir
    %0 = aten.}] # mnemonic # [{ %x : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$self);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($result)";
}

def Aten_NegOp : Aten_UnaryOp<"neg", "-x.">;
def Aten_ReluOp : Aten_UnaryOp<"relu", "max(x, 0).">;
def Aten_TanhOp : Aten_UnaryOp<"tanh", "Hyperbolic tangent.">;
def Aten_SigmoidOp : Aten_UnaryOp<"sigmoid", "1 / (1 + exp(-x)).">;
def Aten_ExpOp : Aten_UnaryOp<"exp", "e to the x.">;

def Aten_GeluOp : Aten_Op<"gelu", [Pure, SameOperandsAndResultType]> {
  let summary = "Gaussian error linear unit, exact or tanh-approximated.";
  let description = [{
    `approximate` is "none" (x * Phi(x) with erf) or "tanh".

    Example:
    ```mlir
    %0 = aten.gelu %x {approximate = "tanh"} : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$self,
                   DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

def Aten_MmOp : Aten_Op<"mm", [Pure]> {
  let summary = "Matrix product of two 2-D tensors.";
  let description = [{
    Example:
    ```mlir
    %0 = aten.mm %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$self, AnyRankedTensor:$mat2);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $self `,` $mat2 attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_AddmmOp : Aten_Op<"addmm", [Pure]> {
  let summary = "beta * self + alpha * (mat1 @ mat2); self broadcasts.";
  let description = [{
    What `nn.Linear` decomposes to.

    Example:
    ```mlir
    %0 = aten.addmm %bias, %x, %wt {alpha = 1.0 : f64, beta = 1.0 : f64}
        : (tensor<16xf32>, tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$self, AnyRankedTensor:$mat1,
                   AnyRankedTensor:$mat2,
                   DefaultValuedAttr<F64Attr, "1.0">:$beta,
                   DefaultValuedAttr<F64Attr, "1.0">:$alpha);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $self `,` $mat1 `,` $mat2 attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_BmmOp : Aten_Op<"bmm", [Pure]> {
  let summary = "Batched matrix product of two 3-D tensors.";
  let description = [{
    Example:
    ```mlir
    %0 = aten.bmm %a, %b : (tensor<2x4x8xf32>, tensor<2x8x5xf32>) -> tensor<2x4x5xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$self, AnyRankedTensor:$mat2);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $self `,` $mat2 attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalisation and reductions
//===----------------------------------------------------------------------===//

def Aten_SoftmaxOp : Aten_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "Softmax along one dimension (`aten._softmax`).";
  let description = [{
    Computed stably: exp(x - max) / sum(exp(x - max)). With
    `zero_masked_rows`, a row whose every element is -inf gives zeros
    instead of NaNs, as torch's `_safe_softmax` (attention with fully masked
    rows) does: kiln-fold-safe-softmax sets it.

    Example:
    ```mlir
    %0 = aten.softmax %x {dim = 1 : i64} : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$self, I64Attr:$dim,
                   UnitAttr:$zero_masked_rows);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($result)";
  let hasVerifier = 1;
}

class Aten_ReductionOp<string mnemonic, string summaryText>
    : Aten_Op<mnemonic, [Pure]> {
  let summary = summaryText;
  let description = [{
    Reduces over `dims` (all dimensions when empty); `keepdim` keeps them as
    extent 1. The result element type is the accumulation and output type.

    Example:
    ```mlir
    %0 = aten.}] # mnemonic # [{ %x {dims = array<i64: 1>, keepdim = true}
        : (tensor<2x8xf32>) -> tensor<2x1xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$self, DenseI64ArrayAttr:$dims,
                   DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_SumOp : Aten_ReductionOp<"sum", "Sum over dimensions.">;
def Aten_MeanOp : Aten_ReductionOp<"mean", "Mean over dimensions.">;

def Aten_NativeLayerNormOp : Aten_Op<"native_layer_norm",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "Layer normalisation over the trailing dimensions.";
  let description = [{
    Normalises over the last `normalized_rank` dimensions. Returns the output,
    the mean and the reciprocal standard deviation; mean and rstd keep the
    normalised dimensions as extent 1, as PyTorch's do.

    Example:
    ```mlir
    %out, %mean, %rstd = aten.native_layer_norm %x, %w, %b
        {normalized_rank = 1 : i64, eps = 1.0e-05 : f64}
        : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>)
        -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                   Optional<AnyRankedTensor>:$weight,
                   Optional<AnyRankedTensor>:$bias,
                   I64Attr:$normalized_rank, F64Attr:$eps);
  let results = (outs AnyRankedTensor:$output,
                 AnyRankedTensor:$mean, AnyRankedTensor:$rstd);
  let assemblyFormat = [{
    $input (`,` `weight` $weight^)? (`,` `bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Aten_BitcastOp : Aten_Op<"bitcast", [Pure]> {
  let summary = "Each element's bits read as another type of the same width.";
  let description = [{
    `Tensor.view(dtype)` between types of one width: f32 and i32, f64 and
    i64, f16, bf16 and i16. The shape is unchanged; no value is converted.
    (The importer writes views between the 8-bit types, where uint8 is
    carried in i16, as conversions, and refuses views that change the
    width.)

    Example:
    ```mlir
    %0 = aten.bitcast %x : (tensor<2x3xf32>) -> tensor<2x3xi32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$self);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type($self, $result)";
  let hasVerifier = 1;
}

def Aten_ViewOp : Aten_Op<"view", [Pure]> {
  let summary = "Reshape to the result type's shape (view, _unsafe_view, "
                "unsqueeze, squeeze).";
  let description = [{
    Element count and element type are unchanged.

    Example:
    ```mlir
    %0 = aten.view %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
    ```
  }];
  // One index per dynamic dimension of the result, outermost first: its
  // size (the importer evaluates the symbolic sizes the graph declares).
  let arguments = (ins AnyRankedTensor:$self, Variadic<Index>:$sizes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $self (`sizes` `(` $sizes^ `)`)? attr-dict `:` functional-type($self, $result)
  }];
  let builders = [OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$self), [{
    build($_builder, $_state, result, self, ::mlir::ValueRange{});
  }]>];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Aten_PermuteOp : Aten_Op<"permute", [Pure]> {
  let summary = "Permute dimensions: result dim i is input dim dims[i].";
  let description = [{
    Also what `transpose` and `t` import as.

    Example:
    ```mlir
    %0 = aten.permute %x {dims = array<i64: 0, 2, 1>}
        : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$self, DenseI64ArrayAttr:$dims);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  // The result type follows from `self` and `dims`.
  let builders = [OpBuilder<(ins "::mlir::Value":$self,
                                 "::llvm::ArrayRef<int64_t>":$dims), [{
    auto type = ::llvm::cast<::mlir::RankedTensorType>(self.getType());
    ::llvm::SmallVector<int64_t> shape;
    for (int64_t d : dims)
      shape.push_back(type.getDimSize(d));
    build($_builder, $_state, type.clone(shape), self,
          $_builder.getDenseI64ArrayAttr(dims));
  }]>];
  let hasVerifier = 1;
}

def Aten_ExpandOp : Aten_Op<"expand", [Pure]> {
  let summary = "Broadcast to the result type's shape.";
  let description = [{
    Size-1 dimensions stretch and new leading dimensions appear, as
    `Tensor.expand` does.

    Example:
    ```mlir
    %0 = aten.expand %x : (tensor<1x4xf32>) -> tensor<3x4xf32>
    ```
  }];
  // One index per dynamic dimension of the result, as aten.view has.
  let arguments = (ins AnyRankedTensor:$self, Variadic<Index>:$sizes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $self (`sizes` `(` $sizes^ `)`)? attr-dict `:` functional-type($self, $result)
  }];
  let builders = [OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$self), [{
    build($_builder, $_state, result, self, ::mlir::ValueRange{});
  }]>];
  let hasVerifier = 1;
}

def Aten_OperatorOp : Aten_Op<"operator"> {
  let summary = "A graph node Kiln cannot import, kept whole for placement.";
  let description = [{
    The importer's placement mode (`ImportOptions::keepUnsupportedNodes`)
    imports a node it would refuse as UNIMPLEMENTED as this op instead: the
    node's op name, the importer's reason, its tensor arguments in order and
    results of its declared types. `kiln-place-nodes` then places it on the
    host with that reason. No lowering accepts it, so a module holding one
    never compiles; it exists only so that placement sees the whole graph
    in one import.

    Example:
    ```mlir
    %0 = aten.operator "aten.stft.default"(%x) {reason = "unsupported op"}
        : (tensor<64xf32>) -> tensor<33x2x2xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$reason,
                   Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $name `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)
  }];
}

include "kiln/Dialect/Aten/IR/AtenTensorOps.td"
include "kiln/Dialect/Aten/IR/AtenNNOps.td"
include "kiln/Dialect/Aten/IR/AtenQuantOps.td"

#endif // KILN_DIALECT_ATEN_ATENOPS_TD
