// Size expressions and the binding of a call's shapes to a manifest with
// symbolic sizes (kiln/common/SymbolicSizes.h), which kilnd and the agents
// both use.
#include "kiln/common/SymbolicSizes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln {
namespace {

using ::testing::HasSubstr;

v1::TensorType typeOf(std::vector<int64_t> shape, std::vector<std::string> symbols = {}) {
  v1::TensorType type;
  type.set_dtype(v1::DTYPE_F32);
  for (int64_t extent : shape)
    type.add_shape(extent);
  for (const std::string &symbol : symbols)
    type.add_symbols(symbol);
  return type;
}

TEST(SizeExpr, ParsesProductsOfSymbolsAndOneInteger) {
  absl::StatusOr<SizeExpr> expr = parseSizeExpr("4*batch*seq");
  ASSERT_TRUE(expr.ok()) << expr.status();
  EXPECT_EQ(expr->coefficient, 4);
  EXPECT_EQ(expr->symbols, (std::vector<std::string>{"batch", "seq"}));
  EXPECT_FALSE(expr->isSymbol());
  EXPECT_EQ(expr->str(), "4*batch*seq");
  EXPECT_TRUE(parseSizeExpr("s0")->isSymbol());
  EXPECT_EQ(*evaluate(*expr, {{"batch", 3}, {"seq", 5}}), 60);
}

TEST(SizeExpr, RefusesWhatIsNotAProduct) {
  for (const char *text : {"", "s0+1", "s0/2", "2*3*s0", "0*s0", "s0**", "7", "-s0", "1s"})
    EXPECT_EQ(parseSizeExpr(text).status().code(), absl::StatusCode::kInvalidArgument)
        << text;
  EXPECT_THAT(std::string(evaluate(*parseSizeExpr("s1"), {{"s0", 2}}).status().message()),
              HasSubstr("'s1' has no value"));
  EXPECT_THAT(std::string(evaluate(*parseSizeExpr("s0*s0*s0"), {{"s0", 1 << 20}})
                              .status()
                              .message()),
              HasSubstr("past 2^40"));
}

v1::ExecutableManifest encoderManifest() {
  // x: f32[batch, seq, 64] -> y: f32[batch*seq, 64]; weight f32[64, 64].
  v1::ExecutableManifest manifest;
  v1::SymbolicDim *batch = manifest.add_symbols();
  batch->set_name("batch");
  batch->set_min(1);
  batch->set_max(64);
  v1::SymbolicDim *seq = manifest.add_symbols();
  seq->set_name("seq");
  seq->set_min(2);
  seq->set_max(512);
  v1::ManifestArgument *weight = manifest.add_parameters();
  weight->set_name("w");
  *weight->mutable_type() = typeOf({64, 64});
  v1::ManifestArgument *x = manifest.add_inputs();
  x->set_name("x");
  *x->mutable_type() = typeOf({2, 8, 64}, {"batch", "seq", ""});
  v1::ManifestArgument *y = manifest.add_outputs();
  y->set_name("y");
  *y->mutable_type() = typeOf({16, 64}, {"batch*seq", ""});
  return manifest;
}

TEST(BindSignature, BindsSymbolsAndSizesTheOutputs) {
  v1::ExecutableManifest manifest = encoderManifest();
  v1::TensorType weight = typeOf({64, 64}), x = typeOf({3, 100, 64});
  absl::StatusOr<BoundSignature> bound = bindSignature(manifest, {&weight}, {&x});
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(bound->ordered, (std::vector<int64_t>{3, 100}));
  ASSERT_EQ(bound->outputs.size(), 1u);
  EXPECT_EQ(bound->outputs[0].shape(0), 300);
  EXPECT_EQ(bound->outputs[0].shape(1), 64);
  EXPECT_EQ(bound->outputs[0].symbols_size(), 0);
  EXPECT_EQ(bound->inputs[0].shape(1), 100);
}

TEST(BindSignature, NamesTheInputDimensionAndSymbolOutOfRange) {
  v1::ExecutableManifest manifest = encoderManifest();
  v1::TensorType weight = typeOf({64, 64}), x = typeOf({3, 1, 64});
  absl::Status status = bindSignature(manifest, {&weight}, {&x}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input 0 ('x') dimension 1 is 1: symbol 'seq' must be in [2, 512]"));
}

TEST(BindSignature, RefusesAStaticDimensionThatDiffers) {
  v1::ExecutableManifest manifest = encoderManifest();
  v1::TensorType weight = typeOf({64, 64}), x = typeOf({3, 8, 32});
  absl::Status status = bindSignature(manifest, {&weight}, {&x}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("f32[batch, seq, 64]"));
}

TEST(BindSignature, ChecksADerivedDimensionAgainstItsSymbols) {
  // y's size as an input: [batch*seq] must agree with x's batch and seq.
  v1::ExecutableManifest manifest = encoderManifest();
  v1::ManifestArgument *flat = manifest.add_inputs();
  flat->set_name("flat");
  *flat->mutable_type() = typeOf({16}, {"batch*seq"});
  v1::TensorType weight = typeOf({64, 64}), x = typeOf({3, 10, 64}), bad = typeOf({31});
  absl::Status status = bindSignature(manifest, {&weight}, {&x, &bad}).status();
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input 1 ('flat') dimension 0 is 31; batch*seq is 30"));
  v1::TensorType good = typeOf({30});
  EXPECT_TRUE(bindSignature(manifest, {&weight}, {&x, &good}).ok());
}

TEST(BindSignature, StaticManifestNeedsExactTypes) {
  v1::ExecutableManifest manifest;
  v1::ManifestArgument *x = manifest.add_inputs();
  x->set_name("x");
  *x->mutable_type() = typeOf({2, 3});
  v1::TensorType same = typeOf({2, 3}), other = typeOf({3, 3});
  EXPECT_TRUE(bindSignature(manifest, {}, {&same}).ok());
  EXPECT_EQ(bindSignature(manifest, {}, {&other}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bindSignature(manifest, {}, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SymbolDeclarations, RangeAndNamesAreChecked) {
  google::protobuf::RepeatedPtrField<v1::SymbolicDim> symbols;
  v1::SymbolicDim *s = symbols.Add();
  s->set_name("s0");
  s->set_min(0);
  s->set_max(4);
  EXPECT_THAT(std::string(checkSymbolDeclarations(symbols).message()),
              HasSubstr("1 <= min <= max"));
  s->set_min(1);
  EXPECT_TRUE(checkSymbolDeclarations(symbols).ok());
  *symbols.Add() = *s;
  EXPECT_THAT(std::string(checkSymbolDeclarations(symbols).message()),
              HasSubstr("declared twice"));
  symbols.RemoveLast();
  EXPECT_THAT(std::string(checkTypeSymbols(typeOf({2, 3}, {"s0", "s1"}), symbols,
                                           "input 'x'")
                              .message()),
              HasSubstr("input 'x' dimension 1 uses symbol 's1'"));
}

v1::ExecutableManifest nonzeroManifest() {
  // x: f32[batch, 5] -> rows: i64[u0, 2], flat: f32[3*u1]; u0 and u1
  // data-dependent.
  v1::ExecutableManifest manifest;
  v1::SymbolicDim *batch = manifest.add_symbols();
  batch->set_name("batch");
  batch->set_min(1);
  batch->set_max(8);
  for (auto [name, max] : {std::pair<const char *, int64_t>{"u0", 40}, {"u1", 8}}) {
    v1::SymbolicDim *symbol = manifest.add_symbols();
    symbol->set_name(name);
    symbol->set_min(0);
    symbol->set_max(max);
    symbol->set_data_dependent(true);
  }
  v1::ManifestArgument *x = manifest.add_inputs();
  x->set_name("x");
  *x->mutable_type() = typeOf({2, 5}, {"batch", ""});
  v1::ManifestArgument *rows = manifest.add_outputs();
  rows->set_name("rows");
  *rows->mutable_type() = typeOf({40, 2}, {"u0", ""});
  v1::ManifestArgument *flat = manifest.add_outputs();
  flat->set_name("flat");
  *flat->mutable_type() = typeOf({24}, {"3*u1"});
  v1::ManifestArgument *y = manifest.add_outputs();
  y->set_name("y");
  *y->mutable_type() = typeOf({2, 5}, {"batch", ""});
  return manifest;
}

TEST(DataDependentSizes, MayBeZeroButOthersMayNot) {
  v1::ExecutableManifest manifest = nonzeroManifest();
  EXPECT_TRUE(checkSymbolDeclarations(manifest.symbols()).ok());
  manifest.mutable_symbols(1)->set_data_dependent(false);
  EXPECT_THAT(std::string(checkSymbolDeclarations(manifest.symbols()).message()),
              HasSubstr("1 <= min"));
  manifest.mutable_symbols(0)->set_min(-1);
  manifest.mutable_symbols(0)->set_data_dependent(true);
  EXPECT_THAT(std::string(checkSymbolDeclarations(manifest.symbols()).message()),
              HasSubstr("0 <= min <= max <= 2^40 (a data-dependent size)"));
}

TEST(DataDependentSizes, BindAtTheirMaxAndNoInputMayUseThem) {
  v1::ExecutableManifest manifest = nonzeroManifest();
  v1::TensorType x = typeOf({3, 5});
  std::vector<int64_t> ordered;
  absl::StatusOr<v1::ExecutableManifest> bound = bindManifest(manifest, {&x}, &ordered);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(ordered, (std::vector<int64_t>{3, 40, 8}));
  EXPECT_EQ(bound->outputs(0).type().shape(0), 40); // allocated at the max
  EXPECT_EQ(bound->outputs(1).type().shape(0), 24);
  EXPECT_EQ(bound->outputs(2).type().shape(0), 3);
  EXPECT_EQ(dataDependentCount(manifest.symbols()), 2);

  *manifest.mutable_inputs(0)->mutable_type() = typeOf({2, 5}, {"batch", "u0"});
  v1::TensorType wide = typeOf({3, 40});
  EXPECT_THAT(std::string(bindManifest(manifest, {&wide}).status().message()),
              HasSubstr("'u0' is data-dependent; no input may use it"));
}

TEST(DataDependentSizes, OutputsTakeTheComputedValues) {
  v1::ExecutableManifest manifest = nonzeroManifest();
  std::vector<v1::TensorType> bound = {typeOf({40, 2}), typeOf({24}), typeOf({3, 5})};
  std::vector<int64_t> computed = {7, 2};
  absl::StatusOr<std::vector<v1::TensorType>> types =
      computedOutputTypes(manifest, bound, computed);
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ(std::vector<int64_t>((*types)[0].shape().begin(), (*types)[0].shape().end()),
            (std::vector<int64_t>{7, 2}));
  EXPECT_EQ((*types)[0].symbols_size(), 0);
  EXPECT_EQ((*types)[1].shape(0), 6); // 3 * u1
  EXPECT_EQ((*types)[2].shape(0), 3); // the bound type, untouched
  // A value outside the range: the values break what the program asserts.
  std::vector<int64_t> past = {41, 0};
  absl::Status status = computedOutputTypes(manifest, bound, past).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("data-dependent size 'u0' more than 40, outside [0, 40]"));
  std::vector<int64_t> one = {1};
  EXPECT_EQ(computedOutputTypes(manifest, bound, one).status().code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(computedOutputTypes(manifest, {bound[0]}, computed).status().code(),
            absl::StatusCode::kInternal);
}

} // namespace
} // namespace kiln
