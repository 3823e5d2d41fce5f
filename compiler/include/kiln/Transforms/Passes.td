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

    A producer with several consumers is copied into each, so fusing along
    a graph whose values are shared many times over (a complex function's
    parts) grows bodies exponentially. A fusion whose body would exceed
    max-body-ops operations is not made.
  }];
  let options = [
    Option<"maxBodyOps", "max-body-ops", "int64_t", /*default=*/"256",
           "the most operations a fused body may have">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def DecomposeAten : Pass<"kiln-decompose-aten", "mlir::func::FuncOp"> {
  let summary = "Rewrite composite aten ops into the aten ops that compute them";
  let description = [{
    Runs on the aten dialect, first in the aten-to-linalg pipeline (every
    target but mdla, which emits ONNX from the aten dialect itself: of
    these ops it runs only adaptive pooling with dividing extents). The importer translates one graph node into one aten op where
    the dialect has it; this pass then expresses the composite ones in
    simpler aten ops, in the arithmetic and element types of their eager
    kernels, so that later passes and the linalg lowering need no case of
    their own for them. Each family of decompositions keeps its own file:

    - `aten.quantize`, `aten.dequantize` and `aten.fake_quantize`
      (DecomposeQuantize.cpp): scale, round half to even, shift, clamp and
      convert, per tensor or per channel, as torch.ao's quantized_decomposed
      ops and ATen's fake-quantize kernels compute them.
    - `aten.searchsorted` (DecomposeSearch.cpp): one broadcast comparison
      of the values against their rows, counted over each row.
    - `aten.cummax`, `aten.cummin` and `aten.logcumsumexp`
      (DecomposeScan.cpp): triangular reductions over (i, j) pairs of the
      scanned dim, when it is at most 128 long (longer ones, and every
      logcumsumexp of complex parts, lower to a loop over the dim in
      kiln-convert-aten-to-linalg).
    - `aten.vector_norm` (DecomposeNorm.cpp): abs, a power and a reduction
      by PyTorch's orders; `aten.group_norm` and `aten.batch_stats_norm`:
      a mean and a biased variance, then the normalization, weight and
      bias.
    - `aten.trilinear` (DecomposeTrilinear.cpp): the two inputs whose
      broadcast is smallest multiplied, then contracted with the third in
      one aten.bmm.
    - `aten.adaptive_avg_pool` and `aten.adaptive_max_pool`
      (DecomposeAdaptivePool.cpp): a plain aten.avg_pool or aten.max_pool
      with kernel = stride = In / Out when every output extent divides its
      input's; otherwise windows gathered by constant index tables, then a
      masked sum divided by the window sizes, or the first maximum mapped
      back to its input index.
    - `aten.embedding_bag` (DecomposeEmbedding.cpp): a (bags, indices)
      membership mask from the offsets and padding_idx, then a masked sum
      (sum, mean) or maximum (max) over the gathered weight rows, and the
      other results as eager's CPU kernel gives them; `aten.embedding_renorm`
      (the same file): each row's norm, and the rows the indices name
      scaled down to max_norm where it exceeds it.
    - `aten.convolution_backward` (DecomposeConvolutionBackward.cpp): the
      input gradient a transposed convolution, the weight gradient a
      grouped convolution of the input by the output gradient (stride and
      dilation swapped), the bias gradient a sum.
    - `aten.max_pool_backward` (DecomposePoolBackward.cpp): each input
      position gathers the gradients of the windows that can cover it whose
      saved index names it, in eager's order; a scatter-add past 2^24 table
      entries or 2^28 gathered elements.
    - `aten.histc` (DecomposeHistc.cpp): each element's bin by eager's
      formula in the element type, then a scatter-add of ones into one
      counter a bin plus one for the elements out of range.
    - `aten.topk` and `aten.kthvalue` (DecomposeSelection.cpp): a stable
      aten.sort along the dim, then the first k entries (descending when
      largest), or entry k - 1 viewed without the dim.
    - `aten.scatter_reduce` (DecomposeScatter.cpp): the primitive
      aten.scatter over self's and src's corners that index covers, from
      the reduction's identity and a scattered count where self takes no
      part, and a scattered sum over a count for "mean".
    - `aten.repeat` (DecomposeRepeat.cpp): a view with a unit dim before
      each dim, one expand to the counts, and a view merging each pair.
  }];
}

def FoldBroadcastProducts : Pass<"kiln-fold-broadcast-products", "mlir::func::FuncOp"> {
  let summary = "Turn a batched product against one broadcast matrix into "
                "a 2-D product";
  let description = [{
    Runs on the aten dialect, first in the aten-to-linalg pipeline:
    `aten.bmm(a[B,M,K], aten.expand(w))` with w of shape (K, N) or
    (1, K, N) becomes `view(aten.mm(view(a, [B*M, K]), w), [B, M, N])`.
    torch's matmul decomposition emits the batched form for a 3-D input
    that is not contiguous (nn.MultiheadAttention's in-projection); it
    materialises B copies of the weight per call and runs B small products.
    B and M may be symbolic sizes: the views then take B*M and B, M as
    size operands (tensor.dim of `a`).
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def FoldSafeSoftmax : Pass<"kiln-fold-safe-softmax", "mlir::func::FuncOp"> {
  let summary = "Fold torch's decomposed _safe_softmax into one softmax";
  let description = [{
    Runs on the aten dialect, in the aten-to-linalg pipeline of every
    target. torch decomposes `_safe_softmax` (scaled_dot_product_attention's
    softmax, which gives zeros for a row masked entirely) into
    `where(logical_not(any(logical_not(eq(x, -inf)), d, keepdim)), 0,
    softmax(x, d))`, or with `all(eq(x, -inf), d, keepdim)` as the
    condition: four more passes over the attention scores, and a boolean
    reduction. Unless something else reads the plain softmax, they become
    `aten.softmax {zero_masked_rows}` of x, which
    zeroes a row whose maximum is -inf (a NaN in the row makes the maximum
    NaN, so such a row stays NaN, as in eager).
  }];
}

def SinkPermutes : Pass<"kiln-sink-permutes", "mlir::func::FuncOp"> {
  let summary = "Move aten.permute past layout-agnostic ops and cancel "
                "inverse pairs";
  let description = [{
    Runs on the aten dialect after kiln-convert-aten-to-kernel-calls with
    channels-last convolutions, whose data crosses each call through a pair
    of permutes. So that activations stay in one layout between calls:
    * permute(permute(x, a), b) is one permute, or x when they cancel;
    * a permute that keeps the order of the dims of extent > 1 (a
      (1, 1, 1, C) tensor channels first) is an aten.view;
    * a view that merges dims the permute keeps adjacent and in order
      merges them before it (a vision transformer's patch embedding,
      conv(x).flatten(2).transpose(1, 2), then needs no transpose);
    * an elementwise op (add, sub, mul, div, the unary ops, gelu,
      aten.pointwise) of permute(y, p) runs on y and is permuted after:
      operands permuted by the same p lose it, 0-d ones stay, and small
      ones (at most 1/8 of the result's elements, static shapes) are
      permuted the other way. At least one operand must be a permute of
      the result's own shape, so nothing moves back and forth;
    * a sum, mean, amax or amin with keepdim of permute(y, p) reduces y's
      matching dims;
    * a max or average pool of a channels-last tensor permuted back pools
      the channels-last tensor (`channels_last`) and is permuted after; a
      max pool only when nothing reads its indices;
    * a float channels-last average pool over the whole spatial extent (a
      global pool, as adaptive_avg_pool2d to 1x1) is a mean of the spatial
      dims.
    What is left of a permute is materialised where an op needs it.
  }];
}

def CopyReturnedArguments : Pass<"kiln-copy-returned-arguments", "mlir::func::FuncOp"> {
  let summary = "Return a copy where a function returns (a view of) its "
                "argument, or one buffer twice";
  let description = [{
    Runs after bufferization. When folding leaves a function returning one of
    its arguments, or a view of one (`x * 1`, `clone(x)`, `view(x)`), the
    result gets its own buffer and a copy, so buffer-results-to-out-params
    (which expects an allocation or a computed buffer) can move it into an
    out-parameter. A buffer returned more than once (a program returning the
    input it mutated: the new value is both the mutation's output and its
    own) is copied for every return after the first: out-params replaces an
    allocation by its out-parameter, and MLIR 19's pass crashes on the
    second return of an allocation it already replaced.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def BareBoundary : Pass<"kiln-bare-boundary", "mlir::func::FuncOp"> {
  let summary = "Give a graph function with symbolic sizes a bare-pointer "
                "boundary";
  let description = [{
    Runs after buffer-results-to-out-params, on a function the importer
    marked with `kiln.symbols` (the symbol names, in the order of its i64
    symbols argument) and `kiln.boundary_sizes` (for each parameter, input
    and result in order, one size expression per dimension, "" when static).
    The bare-pointer calling convention has no room for sizes, so each
    argument of dynamic shape becomes a `memref<0xT>` (its base pointer) and
    a `memref.reinterpret_cast` gives it its row-major shape back inside,
    with every dynamic size evaluated from the symbols argument. The entry
    point then passes one pointer per buffer, and one for the symbols.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
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

def ExpandBFloat16Conversions : Pass<"kiln-expand-bf16-conversions"> {
  let summary = "Convert between bf16 and f32 with integer arithmetic";
  let description = [{
    arith.truncf to bf16 becomes round-to-nearest-even on the f32's bits
    (NaN to a quiet NaN) and arith.extf from bf16 a shift, as eager's
    c10::BFloat16 converts. LLVM would otherwise pick the CPU's conversion
    instruction where the target has one (AVX512-BF16's VCVTNEPS2BF16),
    which flushes subnormals to zero: a result that would depend on the CPU
    compiled for. (The cpu target also turns those features off for the
    conversions LLVM's legalisation of bf16 arithmetic inserts.)
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def TileAndVectorize : Pass<"kiln-tile-and-vectorize", "mlir::func::FuncOp"> {
  let summary = "Tile matmul-like linalg ops for cache and registers, then vectorize";
  let description = [{
    For every statically shaped linalg.matmul and linalg.batch_matmul: tile
    (M, N, K) for the caches, then to an MR x NR register tile with K = 1,
    and vectorize the innermost tile into vector.contract. Tile sizes are the
    largest divisors of each extent not above the requested size, so every
    tile is static and needs no masking. With `transpose-tile` T, every
    static transpose of 32-bit elements that swaps the two innermost dims
    (multiples of T; the matmul's packed panels included) becomes T x T
    blocks, each vectorized: rows read, vector.transpose, rows written.
    Runs on tensors, before bufferization.
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
    Option<"registerTileN", "register-tile-n", "int64_t", "16", "Columns of the register tile">,
    Option<"transposeTile", "transpose-tile", "int64_t", "0",
           "Side of the square blocks innermost-dim transposes are vectorized in "
           "(one vector register per row: 16 with AVX-512, 8 with AVX2); 0 leaves them alone">
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

def PlaceKernelCallReads : Pass<"kiln-place-kernel-call-reads", "mlir::func::FuncOp"> {
  let summary = "Give every kernel-library call its own operand reads";
  let description = [{
    A kernel-library call (kiln-convert-aten-to-kernel-calls) reads its
    operands through `bufferization.to_memref read_only`, the op one-shot
    bufferization takes as the moment the tensor is read. CSE merges the
    reads of one tensor by two calls into the first: bufferization then
    thinks the tensor dead after the first call and may overwrite its buffer
    in place before the second reads it. Run right before bufferization,
    this pass gives each call operand a fresh read (and pointer) just before
    its call, and drops the reads nothing uses any more.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def PlanBuffers : Pass<"kiln-plan-buffers", "mlir::func::FuncOp"> {
  let summary = "Place a function's static buffers in one arena, reusing "
                "the bytes of buffers that are dead";
  let description = [{
    The buffers a function allocates in its body (not in a loop or other
    region) with static shapes become views (memref.view) into one arena
    allocated once at the top of the body, at byte offsets planned from
    their live ranges: a buffer is live from its allocation to the last op
    of the body that uses it or anything derived from it, and two buffers
    whose live ranges overlap never share bytes. A call then makes one
    allocation instead of one per buffer, and the bytes a dead buffer used
    are reused while still in cache. Buffers allocated in regions, with
    dynamic sizes, of sub-byte or index elements, or that leave the body
    (returned, stored) keep their own allocation. kiln-insert-deallocs then
    frees the arena at the end of the body.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
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

def WriteTilesInPlace : Pass<"kiln-write-tiles-in-place", "mlir::func::FuncOp"> {
  let summary = "Compute each scf.forall tile in its slice of the loop's shared output";
  let description = [{
    Runs on tensors, right before one-shot bufferization. Elementwise fusion
    gives an op that only writes its output a fresh tensor.empty as that
    output, so a tile computed that way and inserted into its loop's shared
    output (tensor.parallel_insert_slice) would be bufferized as a new buffer
    and a copy per tile. Upstream's empty-tensor elimination, run on each
    scf.forall alone, computes it in the output's slice instead. Outside
    such loops it would rewrite empties other ops share (a matrix
    exponential's ping-pong buffers in an scf.for came out aliased and
    wrong), so it is scoped to the loops.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect",
                           "mlir::tensor::TensorDialect"];
}

def StackLoopBuffers : Pass<"kiln-stack-loop-buffers", "mlir::func::FuncOp"> {
  let summary = "Put the small buffers of loop bodies on the stack of the function that runs the loop";
  let description = [{
    Runs after kiln-insert-deallocs and kiln-outline-parallel-loops, before
    scf-to-cf. A memref.alloc inside a loop body (per-tile scratch, such as
    a row-tiled softmax's maxima and sums) would call malloc and free on
    every iteration. Each one with a static size of at most
    `max-buffer-bytes`, freed in its own block, becomes one memref.alloca at
    the start of the function, and its deallocs go: the function runs its
    iterations one after another (a parallel loop's iterations run in the
    task functions kiln-outline-parallel-loops made, each thread in its own
    call with its own frame), and nothing reads a buffer across iterations,
    since each is fresh and undefined where it is allocated. Buffers stop
    moving once the function's stack buffers reach `max-function-bytes`.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
  let options = [
    Option<"maxBufferBytes", "max-buffer-bytes", "int64_t", "4096",
           "the largest buffer put on the stack">,
    Option<"maxFunctionBytes", "max-function-bytes", "int64_t", "16384",
           "the most stack bytes a function's moved buffers take">,
  ];
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

def OutlineParallelLoops : Pass<"kiln-outline-parallel-loops", "mlir::ModuleOp"> {
  let summary = "Outline the outermost worthwhile scf.parallel loops into tasks for the runtime's thread pool";
  let description = [{
    Runs on bufferized code (memrefs), before scf-to-cf. In every function,
    the outermost scf.parallel with constant bounds, no results, and enough
    work becomes a call to a launch declaration
    `@<function>_parallel<N>[_<node>]_launch(count, live-ins...)`, and its
    body moves to `@<function>_parallel<N>[_<node>](begin, end,
    live-ins...)`, which runs iterations [begin, end) of the loop. `<node>`
    is the graph node the loop's location names, so profiles name the op. The launch declaration carries
    `kiln.parallel_body = @<function>_parallel<N>`; kiln-lower-parallel-launches
    turns its calls into kiln_rt_parallel_for after the LLVM conversion.

    The parallel dimension is the product of the loop's leading dimensions
    (the fewest that reach `min-trip-count` iterations; never the innermost
    one of a multi-dimensional loop, which stays a vectorizable inner loop),
    delinearized in the body. A loop with fewer iterations gives way to the
    parallel loops nested in it, unless those cover less than half of its
    estimated work; then it is outlined itself when it has at least two.
    Loops estimated below `min-work` operations stay serial: waking threads
    would cost more than they save.

    Live-in constants are rematerialized in the body. A live-in memref with a
    non-identity layout is passed as its base buffer plus its dynamic offset,
    sizes and strides and rebuilt with memref.reinterpret_cast, so every
    memref argument stays a bare pointer.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::scf::SCFDialect",
                           "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
  let options = [
    Option<"minTripCount", "min-trip-count", "int64_t", "4",
           "Iterations the parallel dimension should reach before nested loops are skipped">,
    Option<"minWork", "min-work", "int64_t", "32768",
           "Estimated operations a loop needs to be worth running in parallel">
  ];
}

def LowerParallelLaunches : Pass<"kiln-lower-parallel-launches", "mlir::ModuleOp"> {
  let summary = "Turn calls to parallel launch declarations into kiln_rt_parallel_for";
  let description = [{
    Runs on the LLVM dialect, after func-to-llvm. For each declaration with
    `kiln.parallel_body = @body`, emits an internal task
    `void @body_task(ptr context, i64 begin, i64 end)` that loads the
    live-ins from `context` (a struct of their types) and calls `@body`.
    Every call `@launch(count, live-ins...)` becomes a store of the live-ins
    into a stack slot (allocated once in the caller's entry block) and
    `kiln_rt_parallel_for(@body_task, slot, count)`, which the target
    runtime implements on the loading process's thread pool.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
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
