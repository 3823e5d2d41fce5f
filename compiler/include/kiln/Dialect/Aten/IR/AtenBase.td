//===- AtenBase.td - ATen dialect definition ---------------*- tablegen -*-===//
//
// This file defines the `aten` dialect: core ATen operators on value-semantic
// builtin tensors. It is what `get_mlir` shows and the first stage of every
// Kiln compile.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_ATEN_ATENBASE_TD
#define KILN_DIALECT_ATEN_ATENBASE_TD

include "mlir/IR/OpBase.td"

def Aten_Dialect : Dialect {
  let name = "aten";
  let cppNamespace = "::kiln::aten";
  let summary = "Core ATen operators on ranked builtin tensors.";
  let description = [{
    The `aten` dialect mirrors PyTorch's core ATen operator set. Each op has
    value semantics over ranked builtin tensors (a dimension is dynamic only
    where the graph declares a symbolic size, and only the ops the importer's
    dynamic set names accept one); the result
    type is authoritative (PyTorch's meta functions computed it) and the
    verifiers check it against the operands: broadcasting, matmul shapes,
    permutations, reductions. Scalar arguments of ATen schemas are attributes.
    Element types follow PyTorch: the result element type is the promoted type
    and operands are converted to it when lowered.
  }];
  let dependentDialects = [];
}

class Aten_Op<string mnemonic, list<Trait> traits = []>
    : Op<Aten_Dialect, mnemonic, traits>;

#endif // KILN_DIALECT_ATEN_ATENBASE_TD
