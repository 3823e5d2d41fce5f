//===- SymbolicAgreement.cpp - symbolic sizes that must agree -------------===//
//
// This file implements checkSymbolicAgreement (SymbolicAgreement.h).
//
//===----------------------------------------------------------------------===//
#include "SymbolicAgreement.h"

#include "kiln/common/SymbolicSizes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <set>
#include <vector>

namespace kiln {
namespace {

/// A product of sizes: a coefficient and the symbols, sorted.
struct Product {
  __int128 coefficient = 1;
  std::vector<std::string> symbols;

  bool operator==(const Product &other) const {
    return coefficient == other.coefficient && symbols == other.symbols;
  }
  std::string str() const {
    std::vector<std::string> factors;
    if (coefficient != 1 || symbols.empty())
      factors.push_back(absl::StrCat(static_cast<int64_t>(coefficient)));
    factors.insert(factors.end(), symbols.begin(), symbols.end());
    return absl::StrJoin(factors, "*");
  }
};

/// Dim `d` of `type` as a product (its extent when static).
Product dimOf(const v1::TensorType &type, int d) {
  Product p;
  std::string text = d < type.symbols_size() ? type.symbols(d) : "";
  if (text.empty()) {
    p.coefficient = type.shape(d);
    return p;
  }
  absl::StatusOr<SizeExpr> expr = parseSizeExpr(text);
  if (!expr.ok()) { // checkTypeSymbols refused it already
    p.coefficient = type.shape(d);
    return p;
  }
  p.coefficient = expr->coefficient;
  p.symbols = expr->symbols;
  std::sort(p.symbols.begin(), p.symbols.end());
  return p;
}

/// The element count of `type` as a product (coefficients capped past
/// 2^62, where no two real counts meet).
Product countOf(const v1::TensorType &type) {
  Product count;
  for (int d = 0; d < type.shape_size(); ++d) {
    Product dim = dimOf(type, d);
    count.coefficient = std::min<__int128>(count.coefficient * dim.coefficient,
                                           __int128{1} << 62);
    count.symbols.insert(count.symbols.end(), dim.symbols.begin(), dim.symbols.end());
  }
  std::sort(count.symbols.begin(), count.symbols.end());
  return count;
}

bool isSymbolicDim(const Product &p) { return !p.symbols.empty(); }

const std::set<std::string> &viewOps() {
  static const std::set<std::string> ops = {
      "aten.view.default", "aten._unsafe_view.default", "aten.reshape.default",
      "aten.flatten.using_ints", "aten.unflatten.int", "prims.collapse.default",
      "aten.squeeze.default", "aten.squeeze.dim", "aten.squeeze.dims",
      "aten.unsqueeze.default"};
  return ops;
}

/// The ops among those that take symbolic sizes (GraphImporter's list)
/// whose every tensor operand has the result's size in each dim,
/// right-aligned, or a static 1 there: elementwise ops, expand, and slice
/// (whose sliced dim is static).
bool keepsDims(const std::string &op) {
  static const std::set<std::string> prefixes = {
      "aten.add.", "aten.sub.", "aten.mul.", "aten.div.", "aten.where.",
      "aten.masked_fill.", "aten.maximum.", "aten.minimum.", "aten.pow.",
      "aten.rsub.", "aten.logical_and.", "aten.logical_or.", "aten.logical_not.",
      "aten.eq.", "aten.ne.", "aten.lt.", "aten.le.", "aten.gt.", "aten.ge.",
      "aten.neg.", "aten.relu.", "aten.tanh.", "aten.sigmoid.", "aten.exp.",
      "aten.gelu.", "aten.clone.", "aten.alias.", "aten.detach.", "aten._to_copy.",
      "aten.full_like.", "aten.zeros_like.", "aten.ones_like.", "aten.clamp.",
      "aten.clamp_min.", "aten.clamp_max.", "aten.hardtanh.", "aten.leaky_relu.",
      "aten.silu.", "aten.sqrt.", "aten.rsqrt.", "aten.log.", "aten.erf.",
      "aten.reciprocal.", "aten.abs.", "aten.sin.", "aten.cos.", "aten.isnan.",
      "aten.isinf.", "aten.expand.", "aten.slice.", "aten._softmax.",
      "aten.softmax.", "aten._log_softmax.", "aten.log_softmax."};
  for (const std::string &prefix : prefixes)
    if (op.rfind(prefix, 0) == 0)
      return true;
  return false;
}

/// mm, addmm, bmm: the (batch,) rows, columns and contracted depth of the
/// operands and the result. Empty message when they agree (or the node is
/// not a product).
std::string productDisagreement(const v1::Node &node, const v1::TensorType &result,
                                const DeclaredTypeLookup &declared) {
  auto operand = [&](const char *name) -> const v1::TensorType * {
    for (const v1::Argument &argument : node.arguments())
      if (argument.name() == name && argument.kind_case() == v1::Argument::kValue)
        return declared(argument.value());
    return nullptr;
  };
  bool batched = node.op() == "aten.bmm.default";
  const char *lhsName = node.op() == "aten.addmm.default" ? "mat1" : "self";
  const char *rhsName = "mat2";
  if (node.op() != "aten.mm.default" && node.op() != "aten.addmm.default" && !batched)
    return "";
  const v1::TensorType *lhs = operand(lhsName), *rhs = operand(rhsName);
  int rank = batched ? 3 : 2;
  if (!lhs || !rhs || lhs->shape_size() != rank || rhs->shape_size() != rank ||
      result.shape_size() != rank)
    return ""; // the handler checks the ranks
  int b = batched ? 1 : 0;
  struct Pair { Product a, b; const char *what; };
  std::vector<Pair> pairs = {
      {dimOf(*lhs, b + 1), dimOf(*rhs, b), "the contracted depth"},
      {dimOf(*lhs, b), dimOf(result, b), "the rows"},
      {dimOf(*rhs, b + 1), dimOf(result, b + 1), "the columns"}};
  if (batched) {
    pairs.push_back({dimOf(*lhs, 0), dimOf(result, 0), "the batch"});
    pairs.push_back({dimOf(*rhs, 0), dimOf(result, 0), "the batch"});
  }
  for (const Pair &p : pairs)
    if (!(p.a == p.b) && (isSymbolicDim(p.a) || isSymbolicDim(p.b)))
      return absl::StrCat(p.what, " is ", p.a.str(), " in one operand and ", p.b.str(),
                          " where it must be the same");
  return "";
}

} // namespace

absl::Status checkSymbolicAgreement(const v1::Node &node, int index,
                                    const DeclaredTypeLookup &declared) {
  auto fail = [&](const std::string &message) {
    return absl::InvalidArgumentError(
        absl::StrCat("node ", index, " (", node.op(), "): ", message));
  };
  if (node.outputs_size() == 0 || !node.outputs(0).has_type())
    return absl::OkStatus();
  const v1::TensorType &result = node.outputs(0).type();
  std::vector<std::pair<std::string, const v1::TensorType *>> operands;
  for (const v1::Argument &argument : node.arguments())
    if (argument.kind_case() == v1::Argument::kValue)
      if (const v1::TensorType *type = declared(argument.value()))
        operands.emplace_back(argument.value(), type);
  bool symbolic = isSymbolic(result);
  for (const auto &[name, type] : operands)
    symbolic |= isSymbolic(*type);
  if (!symbolic)
    return absl::OkStatus();

  if (viewOps().count(node.op())) {
    for (const auto &[name, type] : operands) {
      Product in = countOf(*type), out = countOf(result);
      if (!(in == out))
        return fail(absl::StrCat("views ", in.str(), " elements of '", name,
                                 "' as ", out.str(), ": a view keeps its element count"));
    }
    return absl::OkStatus();
  }
  if (std::string product = productDisagreement(node, result, declared); !product.empty())
    return fail(product);
  if (!keepsDims(node.op()))
    return absl::OkStatus();
  // Right-aligned, every operand's dim is the result's or a static 1.
  int rank = result.shape_size();
  for (const auto &[name, type] : operands) {
    int offset = rank - type->shape_size();
    if (offset < 0)
      return fail(absl::StrCat("operand '", name, "' has more dims than the result"));
    for (int d = 0; d < type->shape_size(); ++d) {
      Product have = dimOf(*type, d), want = dimOf(result, d + offset);
      bool broadcastOne = !isSymbolicDim(have) && have.coefficient == 1;
      if (have == want || broadcastOne)
        continue;
      if (!isSymbolicDim(have) && !isSymbolicDim(want))
        continue; // static: the op's verifier checks it
      return fail(absl::StrCat("dim ", d, " of operand '", name, "' is ", have.str(),
                               " where the result's is ", want.str(),
                               ": sizes must be equal or a static 1"));
    }
  }
  return absl::OkStatus();
}

} // namespace kiln
