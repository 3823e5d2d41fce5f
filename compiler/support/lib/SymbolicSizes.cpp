//===- SymbolicSizes.cpp - sizes that vary from call to call --------------===//
//
// This file implements size expressions over symbols and the binding of a
// call's shapes to a manifest with symbolic sizes.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/SymbolicSizes.h"

#include "kiln/common/TensorTypes.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include <set>

namespace kiln {
namespace {

bool isIdentifier(absl::string_view text) {
  if (text.empty() || !(absl::ascii_isalpha(text[0]) || text[0] == '_'))
    return false;
  for (char c : text)
    if (!(absl::ascii_isalnum(c) || c == '_'))
      return false;
  return true;
}

} // namespace

std::string SizeExpr::str() const {
  std::vector<std::string> factors;
  if (coefficient != 1 || symbols.empty())
    factors.push_back(absl::StrCat(coefficient));
  factors.insert(factors.end(), symbols.begin(), symbols.end());
  return absl::StrJoin(factors, "*");
}

absl::StatusOr<SizeExpr> parseSizeExpr(const std::string &text) {
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("size expression '", text, "' ", why,
                     " (a product of symbol names and at most one positive "
                     "integer, e.g. \"4*batch*seq\")"));
  };
  if (text.empty())
    return invalid("is empty");
  SizeExpr expr;
  bool sawNumber = false;
  for (absl::string_view factor : absl::StrSplit(text, '*')) {
    factor = absl::StripAsciiWhitespace(factor);
    if (factor.empty())
      return invalid("has an empty factor");
    if (absl::ascii_isdigit(factor[0])) {
      int64_t value;
      if (sawNumber)
        return invalid("has more than one integer");
      if (!absl::SimpleAtoi(factor, &value) || value < 1 || value > kMaxSymbolValue)
        return invalid(absl::StrCat("has factor '", factor,
                                    "', not an integer in [1, 2^40]"));
      expr.coefficient = value;
      sawNumber = true;
    } else if (isIdentifier(factor)) {
      expr.symbols.emplace_back(factor);
    } else {
      return invalid(absl::StrCat("has factor '", factor, "'"));
    }
  }
  if (expr.symbols.empty())
    return invalid("names no symbol");
  return expr;
}

absl::StatusOr<int64_t> evaluate(const SizeExpr &expr, const SymbolValues &values) {
  __int128 product = expr.coefficient;
  for (const std::string &symbol : expr.symbols) {
    auto it = values.find(symbol);
    if (it == values.end())
      return absl::InvalidArgumentError(
          absl::StrCat("symbol '", symbol, "' has no value"));
    product *= it->second;
    if (product > kMaxSymbolValue)
      return absl::InvalidArgumentError(absl::StrCat(
          "size ", expr.str(), " is past 2^40 for these symbol values"));
  }
  return static_cast<int64_t>(product);
}

bool isSymbolic(const v1::TensorType &type) {
  for (const std::string &symbol : type.symbols())
    if (!symbol.empty())
      return true;
  return false;
}

absl::Status checkSymbolDeclarations(
    const google::protobuf::RepeatedPtrField<v1::SymbolicDim> &symbols) {
  std::set<std::string> seen;
  for (const v1::SymbolicDim &symbol : symbols) {
    if (!isIdentifier(symbol.name()))
      return absl::InvalidArgumentError(absl::StrCat(
          "symbol name '", symbol.name(),
          "' is not a letter or '_' followed by letters, digits or '_'"));
    if (!seen.insert(symbol.name()).second)
      return absl::InvalidArgumentError(
          absl::StrCat("symbol '", symbol.name(), "' is declared twice"));
    int64_t lowest = symbol.data_dependent() ? 0 : 1;
    if (symbol.min() < lowest || symbol.max() < symbol.min() ||
        symbol.max() > kMaxSymbolValue)
      return absl::InvalidArgumentError(absl::StrCat(
          "symbol '", symbol.name(), "' has range [", symbol.min(), ", ",
          symbol.max(), "]; it must satisfy ", lowest, " <= min <= max <= 2^40",
          symbol.data_dependent() ? " (a data-dependent size)" : ""));
  }
  return absl::OkStatus();
}

absl::Status checkTypeSymbols(
    const v1::TensorType &type,
    const google::protobuf::RepeatedPtrField<v1::SymbolicDim> &symbols,
    const std::string &what) {
  if (type.symbols_size() == 0)
    return absl::OkStatus();
  if (type.symbols_size() != type.shape_size())
    return absl::InvalidArgumentError(absl::StrCat(
        what, " has ", type.symbols_size(), " symbol entries for ",
        type.shape_size(), " dimensions"));
  for (int d = 0; d < type.symbols_size(); ++d) {
    if (type.symbols(d).empty())
      continue;
    absl::StatusOr<SizeExpr> expr = parseSizeExpr(type.symbols(d));
    if (!expr.ok())
      return absl::InvalidArgumentError(
          absl::StrCat(what, " dimension ", d, ": ", expr.status().message()));
    for (const std::string &name : expr->symbols) {
      bool declared = false;
      for (const v1::SymbolicDim &symbol : symbols)
        declared |= symbol.name() == name;
      if (!declared)
        return absl::InvalidArgumentError(absl::StrCat(
            what, " dimension ", d, " uses symbol '", name,
            "', which the graph does not declare"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::TensorType> concreteType(const v1::TensorType &type,
                                            const SymbolValues &values) {
  v1::TensorType concrete = type;
  concrete.clear_symbols();
  for (int d = 0; d < type.symbols_size() && d < type.shape_size(); ++d) {
    if (type.symbols(d).empty())
      continue;
    absl::StatusOr<SizeExpr> expr = parseSizeExpr(type.symbols(d));
    if (!expr.ok())
      return expr.status();
    absl::StatusOr<int64_t> extent = evaluate(*expr, values);
    if (!extent.ok())
      return extent.status();
    concrete.set_shape(d, *extent);
  }
  return concrete;
}

namespace {

struct Declared {
  const v1::ManifestArgument *argument;
  const v1::TensorType *actual;
  std::string what;
};

absl::Status mismatch(const Declared &d) {
  return absl::InvalidArgumentError(absl::StrCat(
      d.what, " is ", formatType(*d.actual), ", the executable wants ",
      formatType(d.argument->type())));
}

} // namespace

absl::StatusOr<BoundSignature>
bindSignature(const v1::ExecutableManifest &manifest,
              const std::vector<const v1::TensorType *> &parameters,
              const std::vector<const v1::TensorType *> &inputs) {
  std::vector<Declared> declared;
  auto collect = [&](const auto &arguments,
                     const std::vector<const v1::TensorType *> &actual,
                     const char *kind) -> absl::Status {
    if (static_cast<int>(actual.size()) != arguments.size())
      return absl::InvalidArgumentError(
          absl::StrCat("the call has ", actual.size(), " ", kind,
                       "s; the executable wants ", arguments.size()));
    for (int i = 0; i < arguments.size(); ++i)
      declared.push_back({&arguments[i], actual[i],
                          absl::StrCat(kind, " ", i, " ('", arguments[i].name(), "')")});
    return absl::OkStatus();
  };
  if (absl::Status s = collect(manifest.parameters(), parameters, "parameter"); !s.ok())
    return s;
  if (absl::Status s = collect(manifest.inputs(), inputs, "input"); !s.ok())
    return s;

  BoundSignature bound;
  // Bind each symbol from the first dimension that is exactly it.
  for (const Declared &d : declared) {
    const v1::TensorType &want = d.argument->type();
    if (d.actual->dtype() != want.dtype() ||
        d.actual->shape_size() != want.shape_size() ||
        d.actual->symbols_size() != 0)
      return mismatch(d);
    for (int dim = 0; dim < want.symbols_size(); ++dim) {
      if (want.symbols(dim).empty())
        continue;
      absl::StatusOr<SizeExpr> expr = parseSizeExpr(want.symbols(dim));
      if (!expr.ok())
        return expr.status();
      if (expr->isSymbol())
        bound.values.emplace(expr->symbols[0], d.actual->shape(dim));
    }
  }
  for (const v1::SymbolicDim &symbol : manifest.symbols()) {
    if (symbol.data_dependent()) {
      // Computed by the run: the outputs are allocated at its max.
      if (bound.values.count(symbol.name()))
        return absl::InvalidArgumentError(absl::StrCat(
            "symbol '", symbol.name(), "' is data-dependent; no input may use it"));
      bound.values.emplace(symbol.name(), symbol.max());
      bound.ordered.push_back(symbol.max());
      continue;
    }
    auto it = bound.values.find(symbol.name());
    if (it == bound.values.end())
      return absl::InvalidArgumentError(absl::StrCat(
          "no input dimension binds symbol '", symbol.name(), "'"));
    if (it->second < symbol.min() || it->second > symbol.max()) {
      // Name the first dimension that bound it.
      std::string where;
      for (const Declared &d : declared)
        for (int dim = 0; where.empty() && dim < d.argument->type().symbols_size(); ++dim)
          if (d.argument->type().symbols(dim) == symbol.name())
            where = absl::StrCat(d.what, " dimension ", dim, " is ", it->second, ": ");
      return absl::InvalidArgumentError(absl::StrCat(
          where, "symbol '", symbol.name(), "' must be in [", symbol.min(), ", ",
          symbol.max(), "] (the range the executable was compiled for)"));
    }
    bound.ordered.push_back(it->second);
  }
  for (const Declared &d : declared) {
    const v1::TensorType &want = d.argument->type();
    for (int dim = 0; dim < want.shape_size(); ++dim) {
      std::string text = dim < want.symbols_size() ? want.symbols(dim) : "";
      if (text.empty()) {
        if (d.actual->shape(dim) != want.shape(dim))
          return mismatch(d);
        continue;
      }
      absl::StatusOr<SizeExpr> expr = parseSizeExpr(text);
      if (!expr.ok())
        return expr.status();
      absl::StatusOr<int64_t> extent = evaluate(*expr, bound.values);
      if (!extent.ok())
        return extent.status();
      if (*extent != d.actual->shape(dim))
        return absl::InvalidArgumentError(absl::StrCat(
            d.what, " dimension ", dim, " is ", d.actual->shape(dim), "; ",
            text, " is ", *extent, " for this call"));
    }
  }
  auto concretize = [&](const auto &arguments,
                        std::vector<v1::TensorType> &out) -> absl::Status {
    for (const v1::ManifestArgument &argument : arguments) {
      absl::StatusOr<v1::TensorType> type = concreteType(argument.type(), bound.values);
      if (!type.ok())
        return type.status();
      out.push_back(*std::move(type));
    }
    return absl::OkStatus();
  };
  if (absl::Status s = concretize(manifest.parameters(), bound.parameters); !s.ok())
    return s;
  if (absl::Status s = concretize(manifest.inputs(), bound.inputs); !s.ok())
    return s;
  if (absl::Status s = concretize(manifest.outputs(), bound.outputs); !s.ok())
    return s;
  return bound;
}

absl::StatusOr<v1::ExecutableManifest>
bindManifest(const v1::ExecutableManifest &manifest,
             const std::vector<const v1::TensorType *> &inputs,
             std::vector<int64_t> *values) {
  std::vector<const v1::TensorType *> parameters;
  for (const v1::ManifestArgument &parameter : manifest.parameters())
    parameters.push_back(&parameter.type());
  absl::StatusOr<BoundSignature> signature = bindSignature(manifest, parameters, inputs);
  if (!signature.ok())
    return signature.status();
  v1::ExecutableManifest bound = manifest;
  bound.clear_symbols();
  for (int i = 0; i < bound.inputs_size(); ++i)
    *bound.mutable_inputs(i)->mutable_type() = signature->inputs[i];
  for (int i = 0; i < bound.outputs_size(); ++i)
    *bound.mutable_outputs(i)->mutable_type() = signature->outputs[i];
  if (values)
    *values = std::move(signature->ordered);
  return bound;
}

int dataDependentCount(
    const google::protobuf::RepeatedPtrField<v1::SymbolicDim> &symbols) {
  int count = 0;
  for (const v1::SymbolicDim &symbol : symbols)
    count += symbol.data_dependent() ? 1 : 0;
  return count;
}

bool usesDataDependentSize(
    const v1::TensorType &type,
    const google::protobuf::RepeatedPtrField<v1::SymbolicDim> &symbols) {
  for (const std::string &text : type.symbols()) {
    absl::StatusOr<SizeExpr> expr = parseSizeExpr(text);
    if (text.empty() || !expr.ok())
      continue;
    for (const std::string &name : expr->symbols)
      for (const v1::SymbolicDim &symbol : symbols)
        if (symbol.data_dependent() && symbol.name() == name)
          return true;
  }
  return false;
}

absl::StatusOr<std::vector<v1::TensorType>>
computedOutputTypes(const v1::ExecutableManifest &manifest,
                    const std::vector<v1::TensorType> &boundOutputs,
                    std::span<const int64_t> computed) {
  if (boundOutputs.size() != static_cast<size_t>(manifest.outputs_size()) ||
      computed.size() != static_cast<size_t>(dataDependentCount(manifest.symbols())))
    return absl::InternalError(absl::StrCat(
        "the call has ", boundOutputs.size(), " outputs and ", computed.size(),
        " data-dependent sizes; the manifest lists ", manifest.outputs_size(), " and ",
        dataDependentCount(manifest.symbols())));
  SymbolValues values;
  size_t next = 0;
  for (const v1::SymbolicDim &symbol : manifest.symbols()) {
    if (!symbol.data_dependent())
      continue;
    int64_t value = computed[next++];
    // Outputs are allocated at max, which is what the selection can give:
    // a value outside the range is the values breaking what the program
    // asserts (torch._check), and nothing is returned. A repeat_interleave
    // counts only to max + 1, so past max the value is "more than".
    if (value < symbol.min() || value > symbol.max())
      return absl::InvalidArgumentError(absl::StrCat(
          "this call's values make data-dependent size '", symbol.name(), "' ",
          value > symbol.max() ? absl::StrCat("more than ", symbol.max()) : absl::StrCat(value),
          ", outside [", symbol.min(), ", ", symbol.max(),
          "], the range the program asserts"));
    values.emplace(symbol.name(), value);
  }
  std::vector<v1::TensorType> outputs;
  for (int i = 0; i < manifest.outputs_size(); ++i) {
    const v1::TensorType &declared = manifest.outputs(i).type();
    if (!usesDataDependentSize(declared, manifest.symbols())) {
      outputs.push_back(boundOutputs[static_cast<size_t>(i)]);
      continue;
    }
    // The compiler returns such an output only when its other sizes are
    // static (it uses no size the inputs bind).
    absl::StatusOr<v1::TensorType> type = concreteType(declared, values);
    if (!type.ok())
      return absl::InternalError(absl::StrCat("output ", i, " ('", manifest.outputs(i).name(),
                                              "'): ", type.status().message()));
    outputs.push_back(*std::move(type));
  }
  return outputs;
}

} // namespace kiln
