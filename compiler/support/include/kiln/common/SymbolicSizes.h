//===- SymbolicSizes.h - sizes that vary from call to call ----------------===//
//
// This file declares the symbolic sizes of kiln.v1 types (TensorType.symbols
// over Graph.symbols / ExecutableManifest.symbols): parsing their size
// expressions, checking a declaration, and binding a call's concrete shapes
// to symbol values. The compiler, kilnd (validating Execute) and the agents
// (allocating outputs, passing the values to the entry point) share it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/executable.pb.h"
#include "kiln/v1/tensor.pb.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <span>
#include <map>
#include <string>
#include <vector>

namespace kiln {

/// The largest extent a symbol may take (as convertTensorType's element
/// limit: 2^40).
inline constexpr int64_t kMaxSymbolValue = int64_t{1} << 40;

/// A size expression: coefficient * symbols[0] * symbols[1] * ...
struct SizeExpr {
  int64_t coefficient = 1;
  std::vector<std::string> symbols;

  /// True for a bare symbol ("batch"): a dimension that binds it.
  bool isSymbol() const { return coefficient == 1 && symbols.size() == 1; }
  /// "4*batch*seq".
  std::string str() const;
};

/// Parses "batch", "seq*batch", "4*batch". INVALID_ARGUMENT naming the text
/// for anything else (sums, divisions, an empty factor, a zero coefficient).
absl::StatusOr<SizeExpr> parseSizeExpr(const std::string &text);

/// Symbol name -> value.
using SymbolValues = std::map<std::string, int64_t>;

/// `expr` under `values`; INVALID_ARGUMENT for a symbol with no value or a
/// product past kMaxSymbolValue.
absl::StatusOr<int64_t> evaluate(const SizeExpr &expr, const SymbolValues &values);

/// True when `type` has a symbolic dimension.
bool isSymbolic(const v1::TensorType &type);

/// Checks a declaration: names well-formed and unique, 1 <= min <= max <=
/// kMaxSymbolValue (0 <= min for a data-dependent size).
absl::Status checkSymbolDeclarations(
    const google::protobuf::RepeatedPtrField<v1::SymbolicDim> &symbols);

/// Checks one type's symbols against the declared names: one entry per
/// dimension, each "" or an expression over declared symbols. `what` names
/// the type in messages ("input 'x'").
absl::Status checkTypeSymbols(
    const v1::TensorType &type,
    const google::protobuf::RepeatedPtrField<v1::SymbolicDim> &symbols,
    const std::string &what);

/// `type` with every symbolic extent evaluated under `values` and the
/// symbols dropped.
absl::StatusOr<v1::TensorType> concreteType(const v1::TensorType &type,
                                            const SymbolValues &values);

/// A call's concrete signature: the manifest's types with its symbols bound
/// from the concrete input shapes.
struct BoundSignature {
  SymbolValues values;
  /// The values in manifest.symbols order (what the entry point receives).
  std::vector<int64_t> ordered;
  std::vector<v1::TensorType> parameters, inputs, outputs;
};

/// Binds `manifest`'s symbols from the concrete shapes of its parameters and
/// inputs (in manifest order) and checks every dimension: static extents
/// equal, symbols within [min, max], every expression equal to the extent it
/// describes. A data-dependent symbol takes its max (the extent outputs are
/// allocated at); an input that uses one is refused. INVALID_ARGUMENT names the argument, the dimension and the
/// symbol on a violation. A manifest without symbols needs exact types.
absl::StatusOr<BoundSignature>
bindSignature(const v1::ExecutableManifest &manifest,
              const std::vector<const v1::TensorType *> &parameters,
              const std::vector<const v1::TensorType *> &inputs);

/// `manifest` as one call sees it: its symbols bound from `inputs` (the
/// call's input types, in manifest order; parameters are static), every type
/// concrete and no symbols left. `values` (may be null) receives the symbols'
/// values in manifest order, for the entry point. Errors as bindSignature's.
absl::StatusOr<v1::ExecutableManifest>
bindManifest(const v1::ExecutableManifest &manifest,
             const std::vector<const v1::TensorType *> &inputs,
             std::vector<int64_t> *values = nullptr);

/// The number of data-dependent sizes among `symbols` (a manifest's: the
/// entries of the array the executable writes after its outputs).
int dataDependentCount(
    const google::protobuf::RepeatedPtrField<v1::SymbolicDim> &symbols);

/// True when a dimension of `type` uses a data-dependent size among
/// `symbols`.
bool usesDataDependentSize(
    const v1::TensorType &type,
    const google::protobuf::RepeatedPtrField<v1::SymbolicDim> &symbols);

/// `manifest`'s output types after a run: `boundOutputs` (the call's
/// output types, as bindManifest gave them), except that an output using a
/// data-dependent size takes it from `computed` (what the run computed, in
/// manifest order; TaskResult.data_dependent_sizes). INVALID_ARGUMENT
/// naming the size and its range when a computed value is outside it (the
/// call's values break what the program asserts); INTERNAL when a length
/// is wrong.
absl::StatusOr<std::vector<v1::TensorType>>
computedOutputTypes(const v1::ExecutableManifest &manifest,
                    const std::vector<v1::TensorType> &boundOutputs,
                    std::span<const int64_t> computed);

} // namespace kiln
