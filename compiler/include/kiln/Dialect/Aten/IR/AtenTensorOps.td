//===- AtenTensorOps.td - table-driven ATen op families ----*- tablegen -*-===//
//
// This file defines the aten ops that stand for whole families of ATen
// overloads: pointwise math (one op, the function named by an attribute and
// looked up in a table), more reductions, indexing, slicing, concatenation
// and index-generating creation ops.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_ATEN_ATENTENSOROPS_TD
#define KILN_DIALECT_ATEN_ATENTENSOROPS_TD

//===----------------------------------------------------------------------===//
// Pointwise families
//===----------------------------------------------------------------------===//

def Aten_PointwiseOp : Aten_Op<"pointwise", [Pure]> {
  let summary = "An elementwise function from Kiln's pointwise table.";
  let description = [{
    `fn` names an entry of the pointwise table (`PointwiseFns.h`): unary math
    (`sqrt`, `erf`, `hardswish`...), binary math (`maximum`, `pow`,
    `remainder`...), comparisons (`lt`, `eq`...) and logical ops producing
    `i1`, `where`, and `copy` (element type conversion). Operands broadcast
    to the result shape by PyTorch's rules; `scalars` carries the function's
    number arguments (e.g. clamp's bounds, leaky_relu's slope). The table
    fixes each function's arity, scalar count and result element kind.

    Example:
    ```mlir
    %0 = aten.pointwise "clamp" %x {scalars = array<f64: 0.0, 6.0>}
        : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %1 = aten.pointwise "lt" %x, %y : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xi1>
    ```
  }];
  let arguments = (ins StrAttr:$fn, Variadic<AnyRankedTensor>:$inputs,
                   DefaultValuedAttr<DenseF64ArrayAttr, "{}">:$scalars);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $fn $inputs attr-dict `:` functional-type($inputs, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// More reductions
//===----------------------------------------------------------------------===//

def Aten_ProdOp : Aten_ReductionOp<"prod", "Product over dimensions.">;
def Aten_AmaxOp : Aten_ReductionOp<"amax", "Maximum over dimensions (NaN wins).">;
def Aten_AminOp : Aten_ReductionOp<"amin", "Minimum over dimensions (NaN wins).">;
def Aten_AnyOp : Aten_ReductionOp<"any", "Logical or over dimensions.">;
def Aten_AllOp : Aten_ReductionOp<"all", "Logical and over dimensions.">;

def Aten_VarOp : Aten_Op<"var", [Pure]> {
  let summary = "Variance (`std` set: standard deviation) over dimensions.";
  let description = [{
    `var.correction` and `std.correction`: sum((x - mean)^2) / (N - correction)
    over `dims` (all when empty), square-rooted when `std` is set.

    Example:
    ```mlir
    %0 = aten.var %x {dims = array<i64: 1>, correction = 1.0 : f64, keepdim = false, std = false}
        : (tensor<2x8xf32>) -> tensor<2xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, DenseI64ArrayAttr:$dims,
                   F64Attr:$correction,
                   DefaultValuedAttr<BoolAttr, "false">:$keepdim,
                   DefaultValuedAttr<BoolAttr, "false">:$std);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_TrilinearOp : Aten_Op<"trilinear", [Pure]> {
  let summary = "Sum over dims of the broadcast product of three tensors.";
  let description = [{
    `aten._trilinear` (what `F.bilinear` exports to), after the importer
    has inserted each input's `expand` dims: `i1`, `i2` and `i3` have one
    rank and broadcast together; the result is the sum over `sumdim`
    (distinct, ascending) of `i1 * i2 * i3`, with those dims removed; all
    four share one float type. kiln-decompose-aten never forms the triple
    product: it multiplies the two inputs whose broadcast is smallest and
    contracts that with the third in one aten.bmm (DecomposeTrilinear.cpp).

    Example:
    ```mlir
    %0 = aten.trilinear %x1, %w, %x2 {sumdim = array<i64: 2, 3>}
        : (tensor<8x1x3x1xf32>, tensor<1x5x3x4xf32>, tensor<8x1x1x4xf32>) -> tensor<8x5xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$i1, AnyStaticShapeTensor:$i2,
                   AnyStaticShapeTensor:$i3, DenseI64ArrayAttr:$sumdim);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $i1 `,` $i2 `,` $i3 attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_EmbeddingBagOp : Aten_Op<"embedding_bag", [Pure]> {
  let summary = "Bags of embedding rows reduced by sum, mean or max.";
  let description = [{
    `_embedding_bag` and `_embedding_bag_forward_only` (nn.EmbeddingBag,
    F.embedding_bag): the N `indices` pick rows of the 2-d floating-point
    `weight`; `offsets` cut them into B bags (B = its length, one less with
    `include_last_offset`, whose last offset only ends the last bag); each
    bag is reduced by `mode` 0 (sum, each row times its
    `per_sample_weights` entry when given), 1 (mean) or 2 (max). An index
    equal to `padding_idx` (-1: none) joins no bag; an empty bag gives
    zeros. `result` is (B, D) in the weight's type.

    The other results follow eager's CPU kernel, in the integer types they
    are declared with: `offset2bag` (N: each index's bag; empty in sum mode
    without padding_idx), `bag_size` (each bag's non-padding indices in mean
    and max modes, zeros in sum mode) and `max_indices` (max mode: (B, D),
    each maximum's weight row, the first among equal values; mean mode: the
    bag sizes; sum mode: zeros). With `include_last_offset`, `bag_size` and
    a 1-d `max_indices` may have B + 1 entries (PyTorch's meta function),
    the last 0. kiln-decompose-aten writes it as a (B, N) membership mask
    and a masked sum or maximum over the gathered rows
    (DecomposeEmbedding.cpp), so B * N is at most 2^24, N * D at most
    2^40 and, in max mode, B * N * D at most 2^26.

    Example:
    ```mlir
    %r, %o2b, %size, %max = aten.embedding_bag %w, %i, %o {mode = 1 : i64,
        include_last_offset = false, padding_idx = -1 : i64}
        : (tensor<10x3xf32>, tensor<5xi64>, tensor<2xi64>)
        -> (tensor<2x3xf32>, tensor<5xi64>, tensor<2xi64>, tensor<2xi64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$weight, AnyStaticShapeTensor:$indices,
                   AnyStaticShapeTensor:$offsets,
                   Optional<AnyStaticShapeTensor>:$per_sample_weights,
                   I64Attr:$mode, BoolAttr:$include_last_offset,
                   I64Attr:$padding_idx);
  let results = (outs AnyStaticShapeTensor:$result, AnyStaticShapeTensor:$offset2bag,
                      AnyStaticShapeTensor:$bag_size,
                      AnyStaticShapeTensor:$max_indices);
  let assemblyFormat = [{
    $weight `,` $indices `,` $offsets
    (`per_sample_weights` $per_sample_weights^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_EmbeddingRenormOp : Aten_Op<"embedding_renorm", [Pure]> {
  let summary = "An embedding table with the rows the indices name renormalised.";
  let description = [{
    `embedding_renorm` (F.embedding with `max_norm`, functionalized): every
    row of the 2-d floating-point `self` that `indices` (integers, any
    shape) names and whose `norm_type`-norm exceeds `max_norm` is scaled by
    max_norm / (norm + 1e-7); the others are kept. As eager's CPU kernel:
    the norm is the row's norm in self's type, the scale is computed in
    double, and the product in f32 for f16/bf16. kiln-decompose-aten writes
    it as aten.vector_norm over the rows and a scale on the rows an
    aten.index_put marks (DecomposeEmbedding.cpp).

    Example:
    ```mlir
    %0 = aten.embedding_renorm %w, %i {max_norm = 1.0 : f64, norm_type = 2.0 : f64}
        : (tensor<10x3xf32>, tensor<2x4xi64>) -> tensor<10x3xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, AnyStaticShapeTensor:$indices,
                   F64Attr:$max_norm, F64Attr:$norm_type);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_LuFactorOp : Aten_Op<"lu_factor", [Pure]> {
  let summary = "LU factorisation with partial pivoting of a batch of matrices.";
  let description = [{
    LAPACK's getrf on each (m, n) matrix of a (B, m, n) f32 or f64 batch,
    what the determinants (`_linalg_det`, `_linalg_slogdet`) and the solves
    factorise (square) and lu_factor and linalg.lu return (any shape).
    Step k < min(m, n) picks the first row at or below k whose column-k
    entry has the largest magnitude, swaps it with row k, stores the
    multipliers below the pivot (0 for a zero pivot: the matrix is
    singular) and updates the trailing block. `lu` holds L below the
    diagonal (unit) and U on and above it; `pivots` (B, min(m, n), i64) the
    0-based row swapped with each step's row; `odd` (B, 1, i1) whether the
    swaps were odd in number. kiln-convert-aten-to-linalg writes it as
    dgetf2's scalar loops (Factorisations.cpp), so m and n are at most 512
    (`kMaxLuOrder`).

    Complex matrices come as (B, m, n, 2) pairs of their (real, imaginary)
    parts, and `lu` is pairs too: zgetf2, whose pivot is the entry with the
    largest |re| + |im| (izamax's measure) and whose multipliers are complex
    quotients (ComplexFactorisations.cpp).

    Example:
    ```mlir
    %lu, %pivots, %odd = aten.lu_factor %a
        : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi1>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self);
  let results = (outs AnyStaticShapeTensor:$lu, AnyStaticShapeTensor:$pivots,
                      AnyStaticShapeTensor:$odd);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_LuPermutationOp : Aten_Op<"lu_permutation", [Pure]> {
  let summary = "The row order an LU factorisation's row swaps leave.";
  let description = [{
    For `pivots` (B, k) i64, the 0-based row swapped with each step's row in
    turn (aten.lu_factor's), the (B, n) i64 permutation they make of 0 ..
    n - 1, n >= k: row i of P^T A is row result[i] of A, so that A = P L U
    with P[result[i], i] = 1. A pivot outside [0, n) swaps nothing (getrf
    never gives one; lu_unpack's come from the caller).
    kiln-convert-aten-to-linalg writes it as the swaps in a scalar loop.

    Example:
    ```mlir
    %perm = aten.lu_permutation %pivots : (tensor<2x3xi64>) -> tensor<2x3xi64>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$pivots);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$pivots attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_LinalgSolveOp : Aten_Op<"linalg_solve", [Pure]> {
  let summary = "X with A X = B for a batch of square matrices A.";
  let description = [{
    `linalg_solve` (torch.linalg.solve, inv): for a (N, n, n) f32 or f64
    batch `a` and a (N, n, k) batch `rhs` of the same element type, the
    (N, n, k) solution of a[i] x[i] = rhs[i]: LAPACK's getrf (as
    lu_factor) then getrs (rhs's rows interchanged, forward substitution
    with the unit L, back substitution with U), which
    kiln-convert-aten-to-linalg writes as scalar loops
    (Factorisations.cpp), so n is at most 512 (`kMaxLuOrder`). A singular
    matrix divides by its zero pivot: the solution holds infinities or NaN,
    as eager's getrs gives. Rounding differs from LAPACK's blocked updates
    in the last bits.

    Example:
    ```mlir
    %x = aten.linalg_solve %a, %b
        : (tensor<2x3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$a, AnyStaticShapeTensor:$rhs);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$a `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_TriangularSolveOp : Aten_Op<"triangular_solve", [Pure]> {
  let summary = "X with A X = B for a batch of triangular matrices A.";
  let description = [{
    LAPACK's trtrs on each (n, n) matrix of a (N, n, n) f32 or f64 batch
    against (N, n, k) `rhs`: forward substitution for a lower triangle,
    back substitution for an `upper` one, reading only that triangle (and
    not the diagonal when `unitriangular`: it is taken as ones). A zero on
    the diagonal divides: infinities or NaN, as eager's. kiln-convert-aten-
    to-linalg writes it as scalar loops (Factorisations.cpp), so n is at
    most 512 (`kMaxLuOrder`).

    Complex matrices come as (N, n, n, 2) pairs of their (real, imaginary)
    parts against (N, n, k, 2) pairs, the divisions complex quotients
    (ztrtrs; ComplexFactorisations.cpp).

    Example:
    ```mlir
    %x = aten.triangular_solve %a, %b {upper}
        : (tensor<2x3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$a, AnyStaticShapeTensor:$rhs, UnitAttr:$upper,
                   UnitAttr:$unitriangular);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$a `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_QrOp : Aten_Op<"qr", [Pure]> {
  let summary = "The QR factorisation of a batch of matrices.";
  let description = [{
    LAPACK's geqrf then orgqr on each (m, n) matrix of a (N, m, n) f32 or
    f64 batch, k = min(m, n) Householder reflectors with dlarfg's
    conventions (a column already zero below the diagonal reflects nothing;
    otherwise R's diagonal entry is -sign(a) times the column's norm).
    `q` is (N, m, k) with orthonormal columns, or (N, m, m) with
    `complete`; `r` is (N, k, n), or (N, m, n) with `complete`, upper
    triangular. kiln-convert-aten-to-linalg writes it as scalar loops
    (Factorisations.cpp), so m and n are at most 512 (`kMaxLuOrder`).

    Example:
    ```mlir
    %q, %r = aten.qr %a : (tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<2x3x3xf32>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, UnitAttr:$complete);
  let results = (outs AnyStaticShapeTensor:$q, AnyStaticShapeTensor:$r);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_GeqrfOp : Aten_Op<"geqrf", [Pure]> {
  let summary = "QR factorisation in LAPACK's compact form.";
  let description = [{
    LAPACK's geqrf on each (m, n) matrix of a (N, m, n) f32 or f64 batch,
    `torch.geqrf`: `a` holds R on and above the diagonal and reflector j's
    v below it (v[j] = 1 implied), `tau` (N, min(m, n)) the reflectors'
    scales, with aten.qr's conventions (R's signs are eager's).
    kiln-convert-aten-to-linalg writes it as dgeqr2's scalar loops
    (Factorisations.cpp), so m and n are at most 512 (`kMaxLuOrder`).

    Example:
    ```mlir
    %a, %tau = aten.geqrf %x : (tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<2x3xf32>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self);
  let results = (outs AnyStaticShapeTensor:$a, AnyStaticShapeTensor:$tau);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_HouseholderProductOp : Aten_Op<"householder_product", [Pure]> {
  let summary = "The first columns of a product of Householder reflectors.";
  let description = [{
    For reflectors stored as geqrf leaves them in `self` (N, m, n) and their
    scales `tau` (N, k), k <= n <= m: the first n columns of H_0 ... H_{k-1}
    (`torch.linalg.householder_product`, LAPACK's orgqr). Entries of `self`
    on and above the diagonal are not read. kiln-convert-aten-to-linalg
    writes it as dorg2r's scalar loops, each reflector applied row by row
    (Factorisations.cpp), so m is at most 512 (`kMaxLuOrder`).

    Example:
    ```mlir
    %q = aten.householder_product %a, %tau : (tensor<1x5x3xf64>, tensor<1x2xf64>) -> tensor<1x5x3xf64>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, AnyStaticShapeTensor:$tau);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self `,` $tau attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_OrmqrOp : Aten_Op<"ormqr", [Pure]> {
  let summary = "A product of Householder reflectors applied from the left.";
  let description = [{
    For reflectors stored as geqrf leaves them in `self` (N, m, r) and their
    scales `tau` (N, k), k <= min(m, r), and `other` (N, m, p): Q other with
    Q = H_0 ... H_{k-1}, or Q^T other with `transpose` (LAPACK's ormqr from
    the left; `torch.ormqr`'s right-hand forms are these for other^T).
    kiln-convert-aten-to-linalg writes it as dorm2r's scalar loops, each
    reflector applied row by row (Factorisations.cpp), so m is at most 512
    (`kMaxLuOrder`).

    Example:
    ```mlir
    %y = aten.ormqr %a, %tau, %c {transpose} : (tensor<1x4x3xf32>, tensor<1x3xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, AnyStaticShapeTensor:$tau,
                   AnyStaticShapeTensor:$other, UnitAttr:$transpose);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self `,` $tau `,` $other attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_EigvalshOp : Aten_Op<"eigvalsh", [Pure]> {
  let summary = "The eigenvalues of a batch of symmetric matrices, ascending.";
  let description = [{
    For a (N, n, n) f32 or f64 batch read as symmetric from its lower
    triangle, the (N, n) eigenvalues of each matrix in ascending order
    (`_linalg_eigh`'s first result). kiln-convert-aten-to-linalg writes it
    as LAPACK's dsyev does: a Householder reduction to a tridiagonal
    matrix, implicit QL steps with Wilkinson's shift until each
    off-diagonal entry is negligible (at most 40 per eigenvalue), then a
    selection sort (SymmetricEigen.cpp), so n is at most 512
    (`kMaxLuOrder`). The values agree with LAPACK's syevd to the precision
    of the type; an eigenvalue that does not converge in 40 steps makes the
    matrix's values NaN (LAPACK's info > 0, where eager raises).

    Example:
    ```mlir
    %w = aten.eigvalsh %a : (tensor<2x4x4xf64>) -> tensor<2x4xf64>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_EigvalsOp : Aten_Op<"eigvals", [Pure]> {
  let summary = "The eigenvalues of a batch of square matrices, as parts.";
  let description = [{
    For a (N, n, n) f32 or f64 batch, or a (N, n, n, 2) batch of complex
    matrices as pairs of their parts, the real and imaginary parts (N, n)
    of each matrix's eigenvalues (`linalg_eig`'s first result, complex),
    in the positions LAPACK's dgeev (zgeev) gives them up to order 75 (past it
    LAPACK's dhseqr deflates aggressively and may order them otherwise). kiln-convert-aten-to-linalg
    writes it as dgeev computes values alone: dgebal's exchanges and
    power-of-2 scaling, dgehd2's reduction to Hessenberg form, then
    dlahqr's Francis double-shift QR sweeps, a 2 x 2 block's values as
    dlanv2's (GeneralEigen.cpp), so n is at most 512 (`kMaxLuOrder`). A
    complex pair comes as a + bi then a - bi. Complex matrices take
    zgeev's steps instead: zgebal, zgehd2 and zlahqr's single-shift QR
    sweeps (ComplexEigen.cpp, ComplexSchur.cpp). A matrix with a NaN or an
    infinity (eager raises) or one whose QR sweeps do not converge
    (dlahqr's or zlahqr's info > 0, where LAPACK's dhseqr and zhseqr
    would retry with multishift sweeps) has NaN values.

    Example:
    ```mlir
    %re, %im = aten.eigvals %a : (tensor<2x4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4xf64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self);
  let results = (outs AnyStaticShapeTensor:$real, AnyStaticShapeTensor:$imag);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_EigOp : Aten_Op<"eig", [Pure]> {
  let summary = "The eigenvalues and eigenvectors of a batch of square matrices, as parts.";
  let description = [{
    For a (N, n, n) f32 or f64 batch (or complex pairs, (N, n, n, 2)),
    aten.eigvals's values and the (N, n,
    n) real and imaginary parts of the right eigenvectors, one per column
    in the values' order (`linalg_eig`'s results). Complex matrices take
    zgeev's steps: the Schur form of zlahqr's sweeps, ztrevc3's back
    substitution, zgebak, then each vector scaled to norm 1 and turned so
    that its entry of largest modulus is real (ComplexEigen.cpp). For real ones kiln-convert-aten-to-linalg
    writes it as dgeev does: aten.eigvals's steps with Z accumulated and
    the Schur form kept, dtrevc3's back substitution for each vector,
    back-transformed by Z, dgebak's undoing of the balancing, then each
    vector scaled to norm 1 and a complex one turned so that its entry of
    largest modulus is real (GeneralEigen.cpp). A vector's phase is the
    algorithm's choice (PyTorch leaves it unspecified). A matrix with a NaN
    or an infinity, or whose QR sweeps do not converge, has NaN values and
    vectors.

    Example:
    ```mlir
    %re, %im, %vre, %vim = aten.eig %a : (tensor<1x3x3xf32>) -> (tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3x3xf32>, tensor<1x3x3xf32>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self);
  let results = (outs AnyStaticShapeTensor:$real, AnyStaticShapeTensor:$imag,
                      AnyStaticShapeTensor:$vectors_real, AnyStaticShapeTensor:$vectors_imag);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_LdlFactorOp : Aten_Op<"ldl_factor", [Pure]> {
  let summary = "LDL^T factorisation with Bunch-Kaufman pivoting of a batch of symmetric matrices.";
  let description = [{
    LAPACK's sytrf ('L') on each (n, n) f32 or f64 matrix of a (B, n, n)
    batch read as symmetric from its lower triangle: `ld` holds L's
    multipliers below the diagonal and D's 1 x 1 and 2 x 2 blocks on and
    just below it, the strict upper triangle zero (as `linalg_ldl_factor_ex`
    returns it); `pivots` (B, n, i64) LAPACK's 1-based pivots (k + 1 for a
    1 x 1 pivot from row k, -(k + 1) on both steps of a 2 x 2 one); `info`
    (B, 1, i64) the first step that met a zero column, 1-based, or 0.
    kiln-convert-aten-to-linalg writes it as dsytf2's scalar loops
    (BunchKaufman.cpp), so n is at most 512 (`kMaxLuOrder`).

    Example:
    ```mlir
    %ld, %pivots, %info = aten.ldl_factor %a
        : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x1xi64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self);
  let results = (outs AnyStaticShapeTensor:$ld, AnyStaticShapeTensor:$pivots,
                      AnyStaticShapeTensor:$info);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_LdlSolveOp : Aten_Op<"ldl_solve", [Pure]> {
  let summary = "Solves A X = B from aten.ldl_factor's LD and pivots.";
  let description = [{
    LAPACK's sytrs ('L') for each matrix of a batch: `ld` (N, n, n) and
    `pivots` (N, n, i64, LAPACK's signed 1-based pivots) as aten.ldl_factor
    gives them, `rhs` (N, n, k) of ld's element type; the result has rhs's
    type. Forward through L D (each pivot's row interchange, the
    multipliers, then D's 1 x 1 or 2 x 2 block), then back through L^T and
    the interchanges in reverse. kiln-convert-aten-to-linalg writes it as
    scalar loops over B's rows (BunchKaufman.cpp), so n is at most 512.

    Example:
    ```mlir
    %x = aten.ldl_solve %ld, %pivots, %b
        : (tensor<2x3x3xf64>, tensor<2x3xi64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$ld, AnyStaticShapeTensor:$pivots,
                       AnyStaticShapeTensor:$rhs);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$ld `,` $pivots `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_SvdvalsOp : Aten_Op<"svdvals", [Pure]> {
  let summary = "The singular values of a batch of matrices, descending.";
  let description = [{
    For a (N, m, n) f32 or f64 batch with m >= n (a wide matrix's
    transpose has the same values), the (N, n) singular values of each
    matrix in descending order (`_linalg_svd`'s second result).
    kiln-convert-aten-to-linalg writes it as one-sided Jacobi rotations of
    the columns until every pair is orthogonal to the element type's
    precision (at most 60 sweeps); the values are then the column norms,
    sorted by a selection sort (Jacobi.cpp), so m is at most 512
    (`kMaxLuOrder`).

    Example:
    ```mlir
    %s = aten.svdvals %a : (tensor<2x5x3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_HermitianEigenvectorsOp : Aten_Op<"hermitian_eigenvectors", [Pure]> {
  let summary = "Complex eigenvectors from those of the real embedding.";
  let description = [{
    `self` (N, 2n, 2n): the eigenvectors (columns, aten.eigh's) of the real
    embeddings [[X, -Y], [Y, X]] of Hermitian matrices X + iY, in the
    ascending order of their eigenvalues, which the embedding has each
    twice. The result (N, n, n, 2): orthonormal complex eigenvectors of
    X + iY (columns, as (real, imaginary) pairs) in the same order, each
    eigenvalue once. A column (u; v) of the embedding's is the complex
    vector u + iv; n steps of complex Gram-Schmidt with column pivoting
    (the column with the most left is taken, normalised and projected out
    of the others) take k columns of an eigenvalue of multiplicity k (its
    2k columns span k complex dimensions; distinct eigenvalues' columns are
    orthogonal), and the taken ones are written in column order. Lowered
    as scalar loops (HermitianEigenvectors.cpp).

    Example:
    ```mlir
    %z = aten.hermitian_eigenvectors %v : (tensor<2x8x8xf64>) -> tensor<2x4x4x2xf64>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_ComplexSingularVectorsOp : Aten_Op<"complex_singular_vectors", [Pure]> {
  let summary = "Complex singular vectors from those of the real embedding.";
  let description = [{
    `u` (N, 2m, 2n), or (N, 2m, 2m) for complete ones, `s` (N, 2n) and `v`
    (N, 2n, 2n): aten.svd of the real embeddings [[X, -Y], [Y, X]] of
    complex m x n matrices A = X + iY, m >= n, which have each singular
    value twice. The results: A's left singular vectors (N, m, n, 2), or
    (N, m, m, 2), and right ones (N, n, n, 2), orthonormal complex columns
    as (real, imaginary) pairs in the order of the values, with
    A v_j = s_j u_j for the values over max(m, n) eps s_max (under it,
    A v_j and s_j u_j are both about that small; u_j and v_j come from one
    pair where they can). A pair of the embedding's columns (p, q), M q = s p,
    is a complex pair (u, v) with A v = s u (M [a; b] is A (a + ib)'s
    parts). Complex Gram-Schmidt with column pivoting on the stacked
    (u; v) of the pairs whose value is over max(m, n) eps s_max takes the
    vectors of those values, u and v with the same coefficients; the
    columns of the values at or under it (and U's past n) are taken by
    pivoted Gram-Schmidt of u and of v apart, V's preferring the pairs U's
    took. m is at most 256 (2m rows, kMaxLuOrder). Lowered as scalar loops
    (ComplexSingularVectors.cpp).

    Example:
    ```mlir
    %uc, %vc = aten.complex_singular_vectors %u, %s, %v : (tensor<1x8x6xf64>, tensor<1x6xf64>, tensor<1x6x6xf64>) -> (tensor<1x4x3x2xf64>, tensor<1x3x3x2xf64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$u, AnyStaticShapeTensor:$s,
                       AnyStaticShapeTensor:$v);
  let results = (outs AnyStaticShapeTensor:$left, AnyStaticShapeTensor:$right);
  let assemblyFormat = "$u `,` $s `,` $v attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_EighOp : Aten_Op<"eigh", [Pure]> {
  let summary = "The eigenvalues and eigenvectors of a batch of symmetric matrices.";
  let description = [{
    For a (N, n, n) f32 or f64 batch read as symmetric from its lower
    triangle, the (N, n) eigenvalues of each matrix in ascending order and
    the (N, n, n) orthonormal eigenvectors, one per column in the values'
    order (`_linalg_eigh`'s results). kiln-convert-aten-to-linalg writes it
    as aten.eigvalsh's tridiagonalisation and QL steps, with Q formed from
    the reflectors and the QL rotations applied to it, then a selection
    sort that moves each vector with its value (SymmetricEigen.cpp), so n
    is at most 512 (`kMaxLuOrder`). A vector's sign, and the basis of a
    repeated eigenvalue's space, are the algorithm's choice, not LAPACK's:
    PyTorch leaves both unspecified.

    Example:
    ```mlir
    %w, %v = aten.eigh %a : (tensor<2x4x4xf64>) -> (tensor<2x4xf64>, tensor<2x4x4xf64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self);
  let results = (outs AnyStaticShapeTensor:$eigenvalues, AnyStaticShapeTensor:$eigenvectors);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_SvdOp : Aten_Op<"svd", [Pure]> {
  let summary = "The singular value decomposition of a batch of matrices.";
  let description = [{
    For a (N, m, n) f32 or f64 batch with m >= n (a wide matrix's
    transpose gives its decomposition with U and V exchanged), A = U S V^T:
    the (N, n) singular values S in descending order, the left singular
    vectors U (N, m, n), or (N, m, m) with `complete`, and the right ones V
    (N, n, n), not transposed. kiln-convert-aten-to-linalg writes it as
    aten.svdvals's one-sided Jacobi rotations of the columns, accumulated
    into V; U's columns are the rotated columns divided by their norms, and
    the columns no singular value defines (a zero one's, and those past n
    with `complete`) complete U to an orthonormal basis (Jacobi.cpp), so m
    is at most 512 (`kMaxLuOrder`). The vectors' signs are the rotations'
    choice, not LAPACK's: PyTorch leaves them unspecified.

    Example:
    ```mlir
    %u, %s, %v = aten.svd %a : (tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<2x3xf32>, tensor<2x3x3xf32>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, UnitAttr:$complete);
  let results = (outs AnyStaticShapeTensor:$u, AnyStaticShapeTensor:$s, AnyStaticShapeTensor:$v);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_CholeskyOp : Aten_Op<"cholesky", [Pure]> {
  let summary = "The lower Cholesky factor of a batch of matrices.";
  let description = [{
    LAPACK's potrf (lower) on each (n, n) matrix of a (N, n, n) f32 or f64
    batch: `l` is lower triangular with l l^T = a, reading only a's lower
    triangle. `info` (N, 1, i64) is 0, or the 1-based order of the first
    leading minor that is not positive definite (its pivot is not > 0, or
    NaN); from that column on `l` holds NaN or infinities where LAPACK
    leaves unspecified values. kiln-convert-aten-to-linalg writes it as dpotf2's scalar loops
    (left-looking, Factorisations.cpp), so n is at most 512 (`kMaxLuOrder`).

    Complex Hermitian matrices come as (N, n, n, 2) pairs of their (real,
    imaginary) parts: zpotf2, l l^H = a, whose pivots read only the real
    part of a's diagonal and whose diagonal is real; `l` is pairs too
    (ComplexFactorisations.cpp).

    Example:
    ```mlir
    %l, %info = aten.cholesky %a
        : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2x1xi64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self);
  let results = (outs AnyStaticShapeTensor:$l, AnyStaticShapeTensor:$info);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_MatrixExpOp : Aten_Op<"matrix_exp", [Pure]> {
  let summary = "The exponential of each matrix of a batch.";
  let description = [{
    `torch.linalg.matrix_exp` on each (n, n) matrix of a (N, n, n) f32 or
    f64 batch, by scaling and squaring as eager does: with the matrix's
    1-norm over theta (eager's bound for its degree-18 Taylor polynomial:
    3.01 for f32, 1.09 for f64), the matrix is divided by 2^s,
    s = ceil(log2(norm / theta)), its degree-18 Taylor polynomial taken
    (Bader, Blanes and Casas's evaluation in 5 products, as eager's), and
    the result squared s times; s is the matrix's
    own, so the number of products depends on the data.
    kiln-convert-aten-to-linalg writes it as a loop over the batch with
    linalg.matmul products (MatrixExp.cpp), n at most 512 (`kMaxLuOrder`).

    Example:
    ```mlir
    %e = aten.matrix_exp %a : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_HistcOp : Aten_Op<"histc", [Pure]> {
  let summary = "A histogram of the elements in equal-width bins.";
  let description = [{
    `aten.histc` (torch.histc): the count of the elements of a
    floating-point tensor in each of `bins` equal bins over [min, max], in
    the input's element type. With min == max the range is the elements' own minimum
    and maximum, widened by 1 on each side when those are equal too, as
    eager's. An element x in range falls in bin
    trunc((x - min) * bins / (max - min)) computed in the element type, the
    last bin closed at max, as eager's CPU kernel; elements outside the
    range and NaN count nowhere, nor does an element whose bin is not a
    number in [0, bins] (eager's is undefined there: an overflow, or a
    range empty in the element type). Where eager raises at run time (a
    non-finite data range), Kiln counts nothing. kiln-decompose-aten writes
    it as a scatter-add of ones.

    Example:
    ```mlir
    %h = aten.histc %x {bins = 10 : i64, min = 0.0 : f64, max = 1.0 : f64}
        : (tensor<100xf32>) -> tensor<10xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, I64Attr:$bins, F64Attr:$min,
                   F64Attr:$max);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_HistogramOp : Aten_Op<"histogram", [Pure, AttrSizedOperandSegments]> {
  let summary = "A histogram of the elements, and its bin edges.";
  let description = [{
    `aten.histogram` (torch.histogram): `hist` (B) counts the elements of
    a floating-point tensor in B bins, adding each one's `weight` (the
    input's shape) where one is given, 1 otherwise; `bin_edges` (B + 1)
    bound the bins, each bin closed on the left and the last on both
    sides. Elements outside the edges and NaN count nowhere.

    - With `edges` (`histogram.bins_tensor`), they are the bin edges, and
      an element's bin is found by binary search, as eager's.
    - Without, the edges are B + 1 evenly spaced values computed as
      eager's `linspace` computes them, from `range` (lo, hi) when it is
      given and else from the elements' minimum and maximum (0 and 1 for
      no elements), widened by 1/2 on each side where the two are equal.
      An element's bin is eager's guess (x - lo) * B / (hi - lo) checked
      against the edges beside it.

    With `density`, each count is divided by the total, then by its bin's
    width. Where eager raises at run time (a data range that is not
    finite), the edges are not finite and nothing is counted.
    kiln-decompose-aten writes it as a scatter-add.

    Example:
    ```mlir
    %h, %e = aten.histogram %x {range = array<f64: 0.0, 1.0>}
        : (tensor<100xf32>) -> (tensor<10xf32>, tensor<11xf32>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self,
                   Optional<AnyStaticShapeTensor>:$edges,
                   Optional<AnyStaticShapeTensor>:$weight,
                   OptionalAttr<DenseF64ArrayAttr>:$range, UnitAttr:$density);
  let results = (outs AnyStaticShapeTensor:$hist, AnyStaticShapeTensor:$bin_edges);
  let assemblyFormat = [{
    $self (`edges` $edges^)? (`weight` $weight^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_HistogramddOp : Aten_Op<"histogramdd", [Pure, AttrSizedOperandSegments]> {
  let summary = "A D-dimensional histogram of N points, and its bin edges per dimension.";
  let description = [{
    `aten.histogramdd` (torch.histogramdd: `_histogramdd_bin_edges`,
    `_histogramdd_from_bin_cts`, `_histogramdd_from_bin_tensors`): self
    holds N points of D floating-point coordinates (N, D); `hist` (B0, ...,
    B(D-1)) counts the points in each cell, adding each one's `weight` (N)
    where one is given. `bin_edges` are D tensors (Bd + 1). Along each
    dimension the edges and a point's bin follow aten.histogram: the given
    `edges` and a binary search, or eager's linspace over `range` (lo0,
    hi0, lo1, hi1, ...) or the points' own extremes along that dimension
    (widened by 1/2 where equal), and eager's guess checked against the
    edges beside it. A point outside the edges along any dimension, or
    with a NaN, counts nowhere. With `density` each count is divided by
    the total, then by its cell's width along each dimension in turn.
    kiln-decompose-aten writes it as one scatter-add over the cells.

    Example:
    ```mlir
    %h, %e0, %e1 = aten.histogramdd %x
        : (tensor<100x2xf32>) -> (tensor<3x4xf32>, tensor<4xf32>, tensor<5xf32>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self,
                   Variadic<AnyStaticShapeTensor>:$edges,
                   Optional<AnyStaticShapeTensor>:$weight,
                   OptionalAttr<DenseF64ArrayAttr>:$range, UnitAttr:$density);
  let results = (outs AnyStaticShapeTensor:$hist, Variadic<AnyStaticShapeTensor>:$bin_edges);
  let assemblyFormat = [{
    $self (`edges` $edges^)? (`weight` $weight^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_CdistOp : Aten_Op<"cdist", [Pure]> {
  let summary = "The p-norm distance between each row of x1 and each row of x2.";
  let description = [{
    `aten._cdist_forward` (torch.cdist): for x1 (B..., P, M) and x2
    (B..., R, M) with the same batch dims, result[b, i, j] is the p-norm of
    x1[b, i] - x2[b, j] (p >= 0, with vector_norm's special orders 0, 1, 2
    and inf). With `use_mm` (p = 2, where eager's compute_mode picks its
    matrix-product form: either side past 25 rows, or asked for) it is
    eager's form: sqrt(clamp_min(|x|^2 + |y|^2 - 2 x.y, 0)) from one batched
    product of padded rows. kiln-decompose-aten writes it as that product,
    or as a vector_norm of the broadcast differences.

    Example:
    ```mlir
    %0 = aten.cdist %a, %b {p = 2.0 : f64}
        : (tensor<5x8xf32>, tensor<7x8xf32>) -> tensor<5x7xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$x1, AnyStaticShapeTensor:$x2, F64Attr:$p,
                   UnitAttr:$use_mm);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$x1 `,` $x2 attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_VectorNormOp : Aten_Op<"vector_norm", [Pure]> {
  let summary = "The ord-norm of the elements over dimensions.";
  let description = [{
    `aten.linalg_vector_norm`: `(sum |x|^ord)^(1/ord)` over `dims` (all
    dimensions when empty; `keepdim` keeps them as extent 1), with
    PyTorch's special orders: `inf` the largest |x|, `-inf` the smallest,
    0 the count of nonzero elements, 1 the sum of |x|, 2 the square root of
    the sum of squares. |x| is taken in the result's float type and every
    step computes in it. kiln-decompose-aten writes it as abs, a power and
    a reduction.

    Example:
    ```mlir
    %0 = aten.vector_norm %x {ord = 2.0 : f64, dims = array<i64: 1>}
        : (tensor<2x8xf32>) -> tensor<2xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, F64Attr:$ord,
                   DenseI64ArrayAttr:$dims,
                   DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_ArgReduceOp : Aten_Op<"arg_reduce", [Pure]> {
  let summary = "argmax / argmin along one dimension (or the flattened tensor).";
  let description = [{
    Index (i64) of the first maximum (`max = true`) or minimum along `dim`;
    without `dim` the tensor is flattened first. NaN counts as the extreme.

    Example:
    ```mlir
    %0 = aten.arg_reduce %x {dim = 1 : i64, keepdim = false, max = true}
        : (tensor<2x8xf32>) -> tensor<2xi64>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, OptionalAttr<I64Attr>:$dim,
                   DefaultValuedAttr<BoolAttr, "false">:$keepdim, BoolAttr:$max);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_CumsumOp : Aten_Op<"cumsum", [Pure]> {
  let summary = "Inclusive prefix sum (or, `product`, product) along one dimension.";
  let description = [{
    `cumsum` and `cumprod`.

    Example:
    ```mlir
    %0 = aten.cumsum %x {dim = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, I64Attr:$dim,
                   DefaultValuedAttr<BoolAttr, "false">:$product);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

class Aten_CumExtremumOp<string mnemonic, string what>
    : Aten_Op<mnemonic, [Pure]> {
  let summary = "Running " # what # " along one dimension, with its index.";
  let description = [{
    `aten.cummax` and `aten.cummin`: values[i] is the extremum of x[0..i]
    along `dim` (a 0-d input scans its one element); indices[i] is
    PyTorch's, the last j <= i holding it (the scan updates on ties), or
    once a NaN has been seen the last NaN so far (NaN propagates).
    kiln-decompose-aten computes it as a triangular reduction over (i, j)
    pairs.

    Example:
    ```mlir
    %v, %i = aten.cummax %x {dim = 1 : i64}
        : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xi64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, I64Attr:$dim);
  let results = (outs AnyStaticShapeTensor:$values, AnyStaticShapeTensor:$indices);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_CummaxOp : Aten_CumExtremumOp<"cummax", "maximum">;
def Aten_CumminOp : Aten_CumExtremumOp<"cummin", "minimum">;

def Aten_LogCumSumExpOp : Aten_Op<"logcumsumexp", [Pure]> {
  let summary = "Running log-sum-exp along one dimension.";
  let description = [{
    `aten.logcumsumexp`: out[i] = log(sum_{j <= i} exp(x[j])) along `dim`,
    computed as eager's CPU kernel does: shifted by the running maximum (0
    where it is infinite, so that all -inf gives -inf and +inf gives +inf;
    NaN propagates), f32 and f64 accumulating in f64, f16 and bf16 in f32.
    kiln-decompose-aten computes it as a triangular reduction.

    With `complex`, self's last dim (of size 2, not `dim`) holds complex
    numbers' (real, imaginary) parts, and each step is eager's complex
    log-add-exp of the running value r and the element x: the one of larger
    real part plus log1p(exp(the other minus it)), in f64 for f32 and f64
    parts, (NaN, NaN) from a NaN part, and for two equal infinite real
    parts -inf's own value or log(exp(r) + exp(x)). Its imaginary part
    is not reduced to (-pi, pi], as eager's is not, so the scan is always
    a loop in eager's order (Scans.cpp), never the triangular reduction.

    Example:
    ```mlir
    %0 = aten.logcumsumexp %x {dim = 0 : i64} : (tensor<8xf32>) -> tensor<8xf32>
    %1 = aten.logcumsumexp %z {complex, dim = 1 : i64} : (tensor<3x9x2xf32>) -> tensor<3x9x2xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, I64Attr:$dim, UnitAttr:$complex);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_SortOp : Aten_Op<"sort", [Pure]> {
  let summary = "Stable sort along one dimension, values and i64 indices.";
  let description = [{
    `sort`, `argsort`, `msort`: ascending unless `descending`; NaN sorts
    as the largest value; equal values keep their order. A 0-d self (dim
    0) is its own sort, index 0. The lowering sorts along the last dim and
    transposes around it for another.

    Example:
    ```mlir
    %v, %i = aten.sort %x {dim = 0 : i64, descending = false}
        : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xi64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, I64Attr:$dim,
                   BoolAttr:$descending);
  let results = (outs AnyStaticShapeTensor:$values, AnyStaticShapeTensor:$indices);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_TopkOp : Aten_Op<"topk", [Pure]> {
  let summary = "The k largest (or smallest) along one dimension, sorted, with indices.";
  let description = [{
    `topk(k, dim, largest, sorted)`: the first k of a stable sort along
    `dim`, descending when `largest` (so among equal values the lower index
    comes first; eager leaves that order open). A 0-d self counts as one
    element. kiln-decompose-aten builds it as aten.sort and two slices.

    Example:
    ```mlir
    %v, %i = aten.topk %x {k = 3 : i64, dim = 1 : i64, largest = true}
        : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, I64Attr:$k, I64Attr:$dim,
                   BoolAttr:$largest);
  let results = (outs AnyStaticShapeTensor:$values, AnyStaticShapeTensor:$indices);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_KthvalueOp : Aten_Op<"kthvalue", [Pure]> {
  let summary = "The k-th smallest along one dimension and its index.";
  let description = [{
    `kthvalue(k, dim, keepdim)`: entry k - 1 of a stable ascending sort
    along `dim` (NaN the largest); the dim is dropped unless `keepdim`. A
    0-d self counts as one element. kiln-decompose-aten builds it as
    aten.sort, two slices and views.

    Example:
    ```mlir
    %v, %i = aten.kthvalue %x {k = 2 : i64, dim = 1 : i64, keepdim = false}
        : (tensor<2x8xf32>) -> (tensor<2xf32>, tensor<2xi64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, I64Attr:$k, I64Attr:$dim,
                   BoolAttr:$keepdim);
  let results = (outs AnyStaticShapeTensor:$values, AnyStaticShapeTensor:$indices);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_MedianOp : Aten_Op<"median", [Pure]> {
  let summary = "The lower median along one dimension and its index.";
  let description = [{
    `median(dim, keepdim)` and `nanmedian` (`ignore_nan`): entry
    (n - 1) / 2 of a stable ascending sort along `dim` (NaN the largest) of
    the n entries counted, the dim dropped unless `keepdim`. median counts
    every entry, and a row with a NaN gives its first NaN (value and index);
    nanmedian counts the entries that are not NaN, and a row of NaNs gives
    one of them. Among equal values, eager may return the index of any. A
    0-d self is one entry; the dim may not be empty (eager refuses it).
    kiln-decompose-aten builds it as aten.sort, a count of the NaNs and
    aten.gather at each row's position.

    Example:
    ```mlir
    %v, %i = aten.median %x {dim = 1 : i64, keepdim = false, ignore_nan = false}
        : (tensor<2x8xf32>) -> (tensor<2xf32>, tensor<2xi64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, I64Attr:$dim, BoolAttr:$keepdim,
                   BoolAttr:$ignore_nan);
  let results = (outs AnyStaticShapeTensor:$values, AnyStaticShapeTensor:$indices);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_ModeOp : Aten_Op<"mode", [Pure]> {
  let summary = "The most frequent value along one dimension and its index.";
  let description = [{
    `torch.mode(dim, keepdim)`: of the values with the most occurrences
    along `dim`, the smallest; its index is that of its last occurrence
    (eager's for rows of up to 16 entries, whose sort is stable there;
    beyond, eager's sort is not stable and its index may be any
    occurrence's). NaN entries are never counted (a row of NaNs gives its
    first). The dim is dropped unless `keepdim`; a 0-d self is one entry;
    the dim may not be empty (eager refuses it). kiln-decompose-aten builds
    it as a stable aten.sort, each sorted entry's count from two
    aten.searchsorted of the row into itself, the first largest count
    (aten.arg_reduce) and aten.gather.

    Example:
    ```mlir
    %v, %i = aten.mode %x {dim = 1 : i64, keepdim = false}
        : (tensor<2x8xf32>) -> (tensor<2xf32>, tensor<2xi64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, I64Attr:$dim, BoolAttr:$keepdim);
  let results = (outs AnyStaticShapeTensor:$values, AnyStaticShapeTensor:$indices);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_SearchSortedOp : Aten_Op<"searchsorted", [Pure]> {
  let summary = "Insertion indices of values in the sorted rows of a tensor.";
  let description = [{
    `aten.searchsorted` and `aten.bucketize` (and multinomial's draw from
    a cumulative distribution): for each value v, the index at which it
    would go into its row of `sorted` (the last dim) to keep the row
    sorted, the number of row entries b with `!(b >= v)` (the left side, a
    lower bound) or, with `right`, `!(b > v)` (an upper bound). For a row
    sorted without NaN this is the index eager's binary search returns, and
    a NaN value goes past the end, as there. A 1-d `sorted` is one row for
    every value; otherwise `values` has its rank and its leading dims. The
    result has the values' shape and an integer type (i64, or i32 for
    `out_int32`). kiln-decompose-aten computes it as one broadcast
    comparison counted over the row.

    Example:
    ```mlir
    %i = aten.searchsorted %b, %x {right}
        : (tensor<4xf32>, tensor<2x3xf32>) -> tensor<2x3xi64>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$sorted, AnyStaticShapeTensor:$values,
                   UnitAttr:$right);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $sorted `,` $values attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Slicing, concatenation, indexing
//===----------------------------------------------------------------------===//

def Aten_SliceOp : Aten_Op<"slice", [Pure]> {
  let summary = "Strided slice; the result type gives the extents.";
  let description = [{
    Result element i of dim d reads input index offsets[d] + i * strides[d]
    (`slice.Tensor`, and `select`, `narrow`, `split` through it).

    Example:
    ```mlir
    %0 = aten.slice %x {offsets = array<i64: 0, 2>, strides = array<i64: 1, 2>}
        : (tensor<4x8xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$self, DenseI64ArrayAttr:$offsets,
                   DenseI64ArrayAttr:$strides);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_CatOp : Aten_Op<"cat", [Pure]> {
  let summary = "Concatenation along `dim`; operands convert to the result type.";
  let description = [{
    Example:
    ```mlir
    %0 = aten.cat %a, %b {dim = 1 : i64}
        : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyStaticShapeTensor>:$inputs, I64Attr:$dim);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

def Aten_FlipOp : Aten_Op<"flip", [Pure, SameOperandsAndResultType]> {
  let summary = "Reverses the order of the elements along `dims`.";
  let description = [{
    `flip`: result element i of a flipped dim d reads self's element
    self.shape[d] - 1 - i. The dims are distinct and in range. It lowers to
    one copy whose input indexing runs backwards: no index table.

    Example:
    ```mlir
    %0 = aten.flip %x {dims = array<i64: 0, 2>} : tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, DenseI64ArrayAttr:$dims);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($self)";
  let hasVerifier = 1;
}

def Aten_AsStridedOp : Aten_Op<"as_strided", [Pure]> {
  let summary = "A window of self's row-major elements at an offset, with strides.";
  let description = [{
    `as_strided(size, stride, storage_offset)` (and `unfold`, whose
    windows are such a view): result element i reads element
    storage_offset + sum(i_d * stride[d]) of self's dense row-major
    elements; the result's shape is `size`. Strides are at least 0 and the
    last element read lies inside self. It lowers to one copy whose input
    indexing is that sum over the span of self it reads: no index table.

    Example:
    ```mlir
    %0 = aten.as_strided %x {stride = array<i64: 1, 2>, storage_offset = 1 : i64}
        : (tensor<3x4xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, DenseI64ArrayAttr:$stride,
                   I64Attr:$storage_offset);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The last element of self the window reads (size and stride as in
    /// as_strided; the result must not be empty), or -1 when it lies past
    /// 2^63 - 1.
    static int64_t lastPosition(llvm::ArrayRef<int64_t> size,
                                llvm::ArrayRef<int64_t> stride, int64_t offset);
  }];
}

def Aten_RepeatOp : Aten_Op<"repeat", [Pure]> {
  let summary = "Tiles self `repeats` times along each dim.";
  let description = [{
    `repeat(repeats)`: self, with unit dims prepended up to the length of
    `repeats`, tiled repeats[d] times along dim d, so result dim d is
    repeats[d] * size[d]. Every count is at least 1 (a count of 0 is an
    empty result, which never reaches an op). kiln-decompose-aten builds it
    as a view with a unit dim before each dim, an expand of those to the
    counts and a view merging each pair: one broadcast copy.

    Example:
    ```mlir
    %0 = aten.repeat %x {repeats = array<i64: 2, 1, 3>}
        : (tensor<4x5xf32>) -> tensor<2x4x15xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, DenseI64ArrayAttr:$repeats);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_DiagonalOp : Aten_Op<"diagonal", [Pure]> {
  let summary = "The diagonal of dims `dim1` and `dim2`, `offset` above the main one.";
  let description = [{
    `diagonal` (and `diagonal_copy`): the result has self's other dims in
    order, then the diagonal: element (..., i) reads self at dim1 = i +
    max(-offset, 0) and dim2 = i + max(offset, 0). Its length is
    min(rows - max(-offset, 0), cols - max(offset, 0)), or 0 when the
    offset passes the matrix. It lowers to one copy that reads along the
    diagonal: no index table.

    Example:
    ```mlir
    %0 = aten.diagonal %x {offset = 1 : i64, dim1 = 0 : i64, dim2 = 2 : i64}
        : (tensor<4x2x5xf32>) -> tensor<2x4xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, I64Attr:$offset, I64Attr:$dim1,
                   I64Attr:$dim2);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The length of the diagonal `offset` above the main one of a `rows` x
    /// `cols` matrix (0 past its corners).
    static int64_t length(int64_t rows, int64_t cols, int64_t offset);
  }];
}

def Aten_IndexSelectOp : Aten_Op<"index_select", [Pure]> {
  let summary = "Select along `dim` by an integer index tensor of any rank.";
  let description = [{
    The result shape is self.shape[:dim] + index.shape + self.shape[dim+1:]
    (`index_select`, `embedding`, `index.Tensor` with one index tensor).
    Negative indices count from the end; out-of-range indices are clamped
    (never read outside the tensor). Self is static; the index, and with it
    the result, may have dynamic dims (the positions a repeat_interleave
    computes).

    Example:
    ```mlir
    %0 = aten.index_select %w, %ids {dim = 0 : i64}
        : (tensor<100x16xf32>, tensor<2x5xi64>) -> tensor<2x5x16xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, AnyRankedTensor:$index,
                   I64Attr:$dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$self `,` $index attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_GatherOp : Aten_Op<"gather", [Pure]> {
  let summary = "out[i] = self[i with dim replaced by index[i]].";
  let description = [{
    `aten.gather`: the result has the index's shape. Indices are wrapped and
    clamped like `index_select`'s.

    Example:
    ```mlir
    %0 = aten.gather %x, %idx {dim = 1 : i64}
        : (tensor<2x8xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, AnyStaticShapeTensor:$index,
                   I64Attr:$dim);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self `,` $index attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_InsertSliceOp : Aten_Op<"insert_slice", [Pure]> {
  let summary = "self with `src` written into a strided slice (slice_scatter).";
  let description = [{
    Element i of dim d of `src` lands at offsets[d] + i * strides[d]
    (`slice_scatter`, `select_scatter`). The result has self's type; src
    converts to its element type.

    Example:
    ```mlir
    %0 = aten.insert_slice %x, %src {offsets = array<i64: 0, 2>, strides = array<i64: 1, 1>}
        : (tensor<4x8xf32>, tensor<4x3xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, AnyStaticShapeTensor:$src,
                   DenseI64ArrayAttr:$offsets, DenseI64ArrayAttr:$strides);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self `,` $src attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_IndexPutOp : Aten_Op<"index_put", [Pure]> {
  let summary = "self with rows index[k] set to (or, accumulate, added) values[k].";
  let description = [{
    `index_put` over dim 0: `index` is 1-D (K), `values` is (K, self.shape[1:]).
    Without `accumulate` the last write to a row wins; indices wrap once
    and rows out of range are never written.

    Example:
    ```mlir
    %0 = aten.index_put %x, %idx, %v {accumulate = true}
        : (tensor<5x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> tensor<5x3xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, AnyStaticShapeTensor:$index,
                   AnyStaticShapeTensor:$values, BoolAttr:$accumulate);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $self `,` $index `,` $values attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_ScatterOp : Aten_Op<"scatter", [Pure]> {
  let summary = "Scatter src along `dim` at index positions, combining by `reduce`.";
  let description = [{
    `scatter.src/value`, `scatter_add`, `scatter_reduce.two` (include_self):
    out[.., index[.., k, ..], ..] = src[.., k, ..] (reduce "none"), or
    combined with "sum", "prod", "amax", "amin". index and src have self's
    shape except along `dim`. Indices wrap once; out-of-range ones write
    nothing.

    Example:
    ```mlir
    %0 = aten.scatter %x, %idx, %src {dim = 1 : i64, reduce = "sum"}
        : (tensor<2x8xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, AnyStaticShapeTensor:$index,
                   AnyStaticShapeTensor:$src, I64Attr:$dim, StrAttr:$reduce);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $self `,` $index `,` $src attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_SegmentReduceOp : Aten_Op<"segment_reduce", [Pure]> {
  let summary = "A reduction of each run of elements along an axis.";
  let description = [{
    `aten.segment_reduce` (torch.segment_reduce): `data`'s elements along
    `axis` are cut into consecutive segments, given per leading index by
    `bounds`: their lengths, or with `offsets` their S + 1 offsets (an
    integer tensor of the leading dims of `data` before `axis`, then the
    segments). Each segment is reduced (`reduce`: sum, mean, max, min,
    prod) starting from `initial` where given: sum adds it, prod multiplies
    by it, max and min take it in, and mean divides the sum with it by the
    segment's length. Without `initial`, an empty segment gives 0 (sum), 1
    (prod), -inf (max), +inf (min) or NaN (mean); with it, `initial`. A NaN
    in a segment makes its max or min NaN. The result is the data's shape
    with the segments in place of `axis`. Where eager raises at run time
    (lengths that do not sum to the axis, negative lengths), each segment
    covers the positions between its bounds that lie in the axis.
    kiln-decompose-aten writes it as a segment-membership mask and a masked
    reduction.

    Example:
    ```mlir
    %r = aten.segment_reduce %x, %lengths {reduce = "max", axis = 0 : i64}
        : (tensor<6x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$data, AnyStaticShapeTensor:$bounds,
                   StrAttr:$reduce, I64Attr:$axis, UnitAttr:$offsets,
                   OptionalAttr<F64Attr>:$initial);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$data `,` $bounds attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_ScatterReduceOp : Aten_Op<"scatter_reduce", [Pure]> {
  let summary = "PyTorch's scatter family, whole: scatter, scatter_add, scatter_reduce.";
  let description = [{
    What `scatter.src/value/reduce/value_reduce`, `scatter_add` and
    `scatter_reduce.two` compute, one op for all of them: `src[.., k, ..]`
    goes to `out[.., index[.., k, ..], ..]` along `dim`, replacing
    (`reduce` "none") or combined by "sum", "prod", "mean", "amax" or
    "amin". Without `include_self` self's values take no part where
    anything lands ("mean" counts self as one value when it does; integers
    divide rounding down). index, src and self have one rank; index may be
    smaller than src in every dim and than self outside `dim` (only src's
    and self's leading corners take part). A 0-d self scatters its one
    element. `wrap_u8`: the tensors are uint8 widened to a wider integer,
    and the "mean" sum wraps modulo 256 before dividing, as eager's uint8
    sum does. kiln-decompose-aten builds it from `aten.scatter` (the
    matching-shape primitive), slices and pointwise ops.

    Example:
    ```mlir
    %0 = aten.scatter_reduce %x, %idx, %src {dim = 1 : i64, reduce = "mean"}
        : (tensor<4x8xf32>, tensor<2x3xi64>, tensor<2x5xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, AnyStaticShapeTensor:$index,
                   AnyStaticShapeTensor:$src, I64Attr:$dim, StrAttr:$reduce,
                   DefaultValuedAttr<BoolAttr, "true">:$include_self,
                   UnitAttr:$wrap_u8);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $self `,` $index `,` $src attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_PutOp : Aten_Op<"put", [Pure]> {
  let summary = "put: self, flattened, with positions index[k] set to (or added) source[k].";
  let description = [{
    `Tensor.put`: self read as one row-major 1-D tensor, index and source
    too (of one element count); without `accumulate` the last write to a
    position wins. Indices wrap once; out-of-range ones (eager's error)
    write nothing. kiln-decompose-aten makes it an `aten.index_put` of the
    flattened tensors.

    Example:
    ```mlir
    %0 = aten.put %x, %idx, %v {accumulate = true}
        : (tensor<3x4xf32>, tensor<2x2xi64>, tensor<4xf32>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, AnyStaticShapeTensor:$index,
                   AnyStaticShapeTensor:$source, BoolAttr:$accumulate);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $self `,` $index `,` $source attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_IndexReduceOp : Aten_Op<"index_reduce", [Pure]> {
  let summary = "index_reduce: source's slices combined into self's at index along dim.";
  let description = [{
    `index_reduce`: source's slice k along `dim` is combined into self's
    slice index[k] by "prod", "mean", "amax" or "amin"; source has self's
    shape except along `dim`, where it has index's one extent. Without
    `include_self` self's values take no part where anything lands ("mean"
    counts self as one value when it does; integers divide rounding down).
    `wrap_u8` as `aten.scatter_reduce`'s. kiln-decompose-aten makes it an
    `aten.scatter_reduce` with index broadcast to source's shape.

    Example:
    ```mlir
    %0 = aten.index_reduce %x, %idx, %src {dim = 1 : i64, reduce = "amax"}
        : (tensor<3x4xf32>, tensor<2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, AnyStaticShapeTensor:$index,
                   AnyStaticShapeTensor:$source, I64Attr:$dim, StrAttr:$reduce,
                   DefaultValuedAttr<BoolAttr, "true">:$include_self,
                   UnitAttr:$wrap_u8);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $self `,` $index `,` $source attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Aten_PadOp : Aten_Op<"pad", [Pure]> {
  let summary = "Constant padding (`constant_pad_nd` with non-negative pads).";
  let description = [{
    Adds low[d] elements before and high[d] after dim d, all `value`.

    Example:
    ```mlir
    %0 = aten.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 2>, value = 0.0 : f64}
        : (tensor<2x3xf32>) -> tensor<2x6xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, DenseI64ArrayAttr:$low,
                   DenseI64ArrayAttr:$high, F64Attr:$value);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_LogSoftmaxOp : Aten_Op<"log_softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "Log-softmax along one dimension (`aten._log_softmax`).";
  let description = [{
    Computed stably: (x - max) - log(sum(exp(x - max))).

    Example:
    ```mlir
    %0 = aten.log_softmax %x {dim = 1 : i64} : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$self, I64Attr:$dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$self attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

def Aten_ArangeOp : Aten_Op<"arange", [Pure]> {
  let summary = "A 1-D tensor start, start + step, ...";
  let description = [{
    The result type gives the length and element type; element i is
    start + i * step computed in f64 and converted. A step of 0 repeats
    start (an integer arange whose step eager cut to 0).

    Example:
    ```mlir
    %0 = aten.arange {start = 0.0 : f64, step = 2.0 : f64} : tensor<5xi64>
    ```
  }];
  let arguments = (ins F64Attr:$start, F64Attr:$step);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Aten_NonzeroOp : Aten_Op<"nonzero", [Pure]> {
  let summary = "The positions of self's nonzero elements, one row each.";
  let description = [{
    `nonzero`: one row per element of self that is not zero (NaN counts as
    nonzero, -0.0 as zero), in row-major order; row k holds that element's
    coordinates, one i64 per dim of self. The row count depends on the
    values: the result's first dim is dynamic, and the graph's
    data-dependent size names it (docs/architecture.md, "Data-dependent
    sizes"). It lowers to two scalar loops: a count, then the rows.

    Example:
    ```mlir
    %0 = aten.nonzero %x : (tensor<4x5xf32>) -> tensor<?x2xi64>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_BooleanMaskOp : Aten_Op<"boolean_mask", [Pure]> {
  let summary = "The rows of self whose mask entry is true.";
  let description = [{
    `x[mask]` (aten.index.Tensor with one boolean index; masked_select after
    its broadcast): mask has the shape of self's leading dims; the result
    holds, in row-major order of mask, the sub-tensor self[p] for every
    position p where mask is true, so its shape is (count, self's other
    dims). The count depends on the values: the result's first dim is
    dynamic, named by the graph's data-dependent size. It lowers to a count
    loop and a loop of row copies.

    Example:
    ```mlir
    %0 = aten.boolean_mask %x, %m : (tensor<4x5x3xf32>, tensor<4x5xi1>) -> tensor<?x3xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, AnyStaticShapeTensor:$mask);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$self `,` $mask attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_UniqueOp : Aten_Op<"unique", [Pure]> {
  let summary = "Self's distinct elements in ascending order, where each element went, and how often each occurs.";
  let description = [{
    `_unique2` (torch.unique without a dim): `values` holds the distinct
    elements of self in ascending order (NaN last, each NaN distinct, as
    eager's), `inverse` (self's shape) the position in `values` of each
    element of self, and `counts` how many elements of self equal each
    value. With `consecutive` (torch.unique_consecutive without a dim) the
    elements keep their row-major order and only runs of equal neighbours
    collapse: `values` holds each run's element, `counts` its length. The
    number of values depends on the data: `values` and `counts` have one
    dynamic dim, named by the graph's data-dependent size.
    kiln-decompose-aten builds it from a stable sort (none when
    consecutive), a comparison of neighbours, a cumulative sum, two
    scatters and two boolean masks.

    Example:
    ```mlir
    %v, %i, %c = aten.unique %x
        : (tensor<2x3xf32>) -> (tensor<?xf32>, tensor<2x3xi64>, tensor<?xi64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, UnitAttr:$consecutive);
  let results = (outs AnyRankedTensor:$values, AnyStaticShapeTensor:$inverse,
                      AnyRankedTensor:$counts);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_UniqueDimOp : Aten_Op<"unique_dim", [Pure]> {
  let summary = "Self's distinct slices along one dim, where each slice went, and how often each occurs.";
  let description = [{
    `unique_dim` (torch.unique with a dim): the slices self[..., i, ...]
    along `dim` are compared whole. `values` holds the distinct slices in
    lexicographic order of their row-major elements (NaN after every
    number; a slice holding a NaN equals no other, as in eager), `inverse`
    (one entry per slice of self) the position in `values` of each slice,
    and `counts` how many slices of self equal each value. With
    `consecutive` (torch.unique_consecutive with a dim) the slices keep
    their order and only runs of equal neighbours collapse. The number of
    values depends on the data: `values` has one dynamic dim, `dim`, and
    `counts` is 1-d and dynamic.
    kiln-decompose-aten moves `dim` to the front, orders the slices by one
    stable sort per element position, last position first (none when
    consecutive), then compares neighbours, takes a cumulative sum, two
    scatters and two boolean masks as aten.unique does.

    Example:
    ```mlir
    %v, %i, %c = aten.unique_dim %x {dim = 1 : i64}
        : (tensor<2x3xf32>) -> (tensor<2x?xf32>, tensor<3xi64>, tensor<?xi64>)
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, I64Attr:$dim, UnitAttr:$consecutive);
  let results = (outs AnyRankedTensor:$values, AnyStaticShapeTensor:$inverse,
                      AnyRankedTensor:$counts);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_RepeatInterleaveOp : Aten_Op<"repeat_interleave", [Pure]> {
  let summary = "Each position of repeats, written repeats[j] times in a row.";
  let description = [{
    `aten.repeat_interleave.Tensor` (what torch's decomposition of
    `repeat_interleave(x, repeats_tensor, dim)` gathers with): the result
    holds j, repeats[j] times, for j = 0, 1, ... in order, in repeats'
    integer type. A negative repeat counts as 0 (eager raises).

    `capacity` is the most elements the result may hold. A static result
    (torch's `output_size`) has exactly that many: past the repeats' sum
    the elements are 0, and the positions stop there. A dynamic result's
    length is the sum, a data-dependent size of the graph whose declared
    max is the capacity (docs/architecture.md, "Data-dependent sizes"); a
    sum past it gives capacity + 1 elements, which the agent refuses as
    outside the size's range. It lowers to two scalar loops: the sum, then
    the runs.

    Example:
    ```mlir
    %0 = aten.repeat_interleave %r {capacity = 64 : i64} : (tensor<4xi64>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$repeats, I64Attr:$capacity);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$repeats attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Aten_BincountOp : Aten_Op<"bincount", [Pure]> {
  let summary = "How often each value 0, 1, ... occurs in self, or its weights' sum.";
  let description = [{
    `bincount(self, weights, minlength)`: element v of the result counts
    the elements of self equal to v (i64), or sums their weights (f32 for
    f32 weights, f64 for any other, as eager's kernel widens them), in
    self's order. Its length is max(minlength, max(self) + 1), minlength
    for an empty self: a data-dependent size of the graph whose declared
    max is `capacity`; a length past it gives capacity + 1 elements, which
    the agent refuses as outside the size's range. A negative element
    counts nowhere (eager raises). It lowers to two scalar loops: the
    length, then the counts.

    Example:
    ```mlir
    %0 = aten.bincount %x {capacity = 16 : i64, minlength = 4 : i64} : (tensor<20xi64>) -> tensor<?xi64>
    %1 = aten.bincount %x, %w {capacity = 16 : i64, minlength = 0 : i64}
        : (tensor<20xi64>, tensor<20xf32>) -> tensor<?xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$self, Optional<AnyStaticShapeTensor>:$weights,
                   I64Attr:$minlength, I64Attr:$capacity);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$self (`,` $weights^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // KILN_DIALECT_ATEN_ATENTENSOROPS_TD
