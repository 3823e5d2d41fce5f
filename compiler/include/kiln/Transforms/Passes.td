//===- Passes.td - Kiln transformation passes --------------*- tablegen -*-===//
//
// This file declares Kiln's own passes of the CPU code generation pipeline.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TRANSFORMS_PASSES_TD
#define KILN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseElementwise : Pass<"kiln-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Fuse elementwise producers into elementwise consumers, never into reductions";
  let description = [{
    Fuses a linalg.generic producer into a consumer only when the consumer is
    all-parallel and reads the producer through a permutation: every fused
    element is then computed exactly once. Upstream's
    linalg-fuse-elementwise-ops also fuses into reductions and propagates
    reshapes, which turns matmuls into generic contractions and recomputes an
    expensive producer (erf, exp) once per reduced element.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def CopyReturnedArguments : Pass<"kiln-copy-returned-arguments", "mlir::func::FuncOp"> {
  let summary = "Return a copy where a function returns (a view of) its argument";
  let description = [{
    Runs after bufferization. When folding leaves a function returning one of
    its arguments, or a view of one (`x * 1`, `clone(x)`, `view(x)`), the
    result gets its own buffer and a copy, so buffer-results-to-out-params
    (which expects an allocation or a computed buffer) can move it into an
    out-parameter.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def ApproximateMath : Pass<"kiln-approximate-math", "mlir::func::FuncOp"> {
  let summary = "Replace transcendental math ops by vectorizable polynomial approximations";
  let description = [{
    tanh, erf, exp (and the other ops MLIR approximates) become arithmetic
    (range reduction plus polynomials, float32-accurate), so loops holding
    them vectorize instead of calling scalar libm functions per element.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def TileAndVectorize : Pass<"kiln-tile-and-vectorize", "mlir::func::FuncOp"> {
  let summary = "Tile matmul-like linalg ops for cache and registers, then vectorize";
  let description = [{
    For every statically shaped linalg.matmul and linalg.batch_matmul: tile
    (M, N, K) for the caches, then to an MR x NR register tile with K = 1,
    and vectorize the innermost tile into vector.contract. Tile sizes are the
    largest divisors of each extent not above the requested size, so every
    tile is static and needs no masking. Runs on tensors, before
    bufferization.
  }];
  let dependentDialects = [
    "mlir::scf::SCFDialect", "mlir::vector::VectorDialect",
    "mlir::tensor::TensorDialect", "mlir::affine::AffineDialect",
    "mlir::arith::ArithDialect"
  ];
  let options = [
    Option<"cacheTileM", "cache-tile-m", "int64_t", "64", "Rows of an L2 tile">,
    Option<"cacheTileN", "cache-tile-n", "int64_t", "128", "Columns of an L2 tile">,
    Option<"cacheTileK", "cache-tile-k", "int64_t", "256", "Depth of an L2 tile">,
    Option<"registerTileM", "register-tile-m", "int64_t", "4", "Rows of the register tile">,
    Option<"registerTileN", "register-tile-n", "int64_t", "16", "Columns of the register tile">
  ];
}

def LowerVectorContracts : Pass<"kiln-lower-vector-contracts", "mlir::func::FuncOp"> {
  let summary = "Hoist loop-invariant vector transfers and lower contractions to FMAs";
  let description = [{
    Runs after bufferization: hoists the accumulator's transfer_read/write
    pair out of the reduction loop, then lowers vector.contract to
    vector.outerproduct (which becomes FMAs) and simplifies transfers.
  }];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::memref::MemRefDialect"];
}

def InsertDeallocs : Pass<"kiln-insert-deallocs", "mlir::func::FuncOp"> {
  let summary = "Free every buffer at the end of the block that allocates it";
  let description = [{
    After bufferization and buffer-results-to-out-params no buffer leaves the
    function. Each memref.alloc is freed by a memref.dealloc before the
    terminator of its block. A buffer that escapes its block through a yield
    is an error, never a leak.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def EmitEntryPoint : Pass<"kiln-emit-entry-point", "mlir::ModuleOp"> {
  let summary = "Add the C-ABI entry point void ENTRY(void **buffers)";
  let description = [{
    Runs on the LLVM dialect after func-to-llvm with bare-pointer memrefs.
    Emits `void <entry>(void **buffers)` that loads one pointer per argument
    of `<callee>` and calls it: parameters, inputs, then outputs, as the
    signature manifest lists them.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
  let options = [
    Option<"entrySymbol", "entry-symbol", "std::string", "\"kiln_invoke\"",
           "Name of the entry point">,
    Option<"callee", "callee", "std::string", "\"kiln_main\"",
           "Function the entry point calls">
  ];
}

def DebugMiscompile : Pass<"kiln-debug-miscompile", "mlir::func::FuncOp"> {
  let summary = "Testing aid: deliberately perturb the values of named graph nodes";
  let description = [{
    Runs on linalg-on-tensors, right after the ATen lowering, and only when a
    daemon is started with `--debug-miscompile` (never by default). For each
    name in `values` it finds the last op of the function body whose location
    is that name (the importer names every op after its node's first output)
    and replaces each of its floating-point tensor results `r` by
    `r * 1.01 + 0.01`, an elementwise linalg.generic. Integer and boolean
    results are left alone. Tests use it to prove that verification finds a
    wrong lowering.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::arith::ArithDialect",
                           "mlir::tensor::TensorDialect"];
  let options = [
    ListOption<"values", "values", "std::string",
               "Names (op locations) of the values to perturb">
  ];
}

#endif // KILN_TRANSFORMS_PASSES_TD
