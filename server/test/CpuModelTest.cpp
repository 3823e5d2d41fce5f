//===- CpuModelTest.cpp - LLVM CPU names, features and deltas -------------===//
//
// This file implements tests for CpuModel against LLVM's own x86-64 tables.
// They name CPUs explicitly, so they pass on any x86-64 host.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/CpuModel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(CpuModelTest, NamedLevelsHaveTheirFeatures) {
  absl::StatusOr<CpuModel> v2 = resolveCpuModel("x86-64-v2", "");
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_EQ(v2->name, "x86-64-v2");
  EXPECT_THAT(v2->features, Contains("sse4.2"));
  EXPECT_THAT(v2->features, Contains("popcnt"));
  EXPECT_THAT(v2->features, Not(Contains("avx")));
  absl::StatusOr<CpuModel> v3 = resolveCpuModel("x86-64-v3", "");
  ASSERT_TRUE(v3.ok()) << v3.status();
  EXPECT_THAT(v3->features, Contains("avx2"));
  EXPECT_THAT(v3->features, Contains("fma"));
  EXPECT_THAT(v3->features, Contains("f16c"));
  EXPECT_THAT(v3->features, Not(Contains("avx512f")));
  absl::StatusOr<CpuModel> v4 = resolveCpuModel("x86-64-v4", "");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_THAT(v4->features, Contains("avx512f"));
  EXPECT_THAT(v4->features, Contains("avx512bw"));
  // Only ISA features: no tuning flags.
  EXPECT_THAT(v4->features, Not(Contains("fast-gather")));
  EXPECT_TRUE(std::is_sorted(v4->features.begin(), v4->features.end()));
}

TEST(CpuModelTest, ExtraFeaturesAddAndRemove) {
  absl::StatusOr<CpuModel> model =
      resolveCpuModel("x86-64-v3", "+avx512f,-movbe");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT(model->features, Contains("avx512f"));
  EXPECT_THAT(model->features, Not(Contains("movbe")));
  // In order: removing a feature removes what implies it (AVX-512 needs FMA).
  absl::StatusOr<CpuModel> implied = resolveCpuModel("x86-64-v4", "-fma");
  ASSERT_TRUE(implied.ok()) << implied.status();
  EXPECT_THAT(implied->features, Not(Contains("fma")));
  EXPECT_THAT(implied->features, Not(Contains("avx512f")));
}

TEST(CpuModelTest, UnknownNamesAreInvalidArgumentNamingThem) {
  absl::StatusOr<CpuModel> cpu = resolveCpuModel("pentium-9000", "");
  EXPECT_EQ(cpu.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cpu.status().message(), HasSubstr("pentium-9000"));
  absl::StatusOr<CpuModel> feature = resolveCpuModel("x86-64", "+warp-drive");
  EXPECT_EQ(feature.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(feature.status().message(), HasSubstr("warp-drive"));
  absl::StatusOr<CpuModel> syntax = resolveCpuModel("x86-64", "avx2");
  EXPECT_EQ(syntax.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(syntax.status().message(), HasSubstr("'avx2'"));
}

TEST(CpuModelTest, NativeIsTheHost) {
  absl::StatusOr<CpuModel> native = resolveCpuModel("native", "");
  ASSERT_TRUE(native.ok()) << native.status();
  EXPECT_EQ(native->name, hostCpuModel().name);
  EXPECT_EQ(native->features, hostCpuModel().features);
  // Every x86-64 host runs baseline code.
  absl::StatusOr<CpuModel> base = resolveCpuModel("x86-64", "");
  ASSERT_TRUE(base.ok());
  EXPECT_TRUE(missingFeatures(base->features, native->features).empty());
}

TEST(CpuModelTest, DeltaReproducesAFeatureSetExactly) {
  absl::StatusOr<CpuModel> v2 = resolveCpuModel("x86-64-v2", "");
  absl::StatusOr<CpuModel> v4 = resolveCpuModel("x86-64-v4", "");
  ASSERT_TRUE(v2.ok() && v4.ok());
  // Down: v3 without its AVX features is v2.
  absl::StatusOr<std::string> down = featureDelta("x86-64-v3", v2->features);
  ASSERT_TRUE(down.ok()) << down.status();
  EXPECT_THAT(*down, HasSubstr("-avx2"));
  absl::StatusOr<CpuModel> back = resolveCpuModel("x86-64-v3", *down);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->features, v2->features);
  // Up: v2 plus the difference is v4.
  absl::StatusOr<std::string> up = featureDelta("x86-64-v2", v4->features);
  ASSERT_TRUE(up.ok());
  EXPECT_EQ(resolveCpuModel("x86-64-v2", *up)->features, v4->features);
  // The same set: no delta.
  EXPECT_EQ(*featureDelta("x86-64-v4", v4->features), "");
}

TEST(CpuModelTest, FeatureListsParseFormatAndCompare) {
  EXPECT_EQ(parseFeatureList("+fma,-avx512f, +avx2,avx2"),
            (std::vector<std::string>{"avx2", "fma"}));
  EXPECT_EQ(formatFeatureList({"avx2", "fma"}), "+avx2,+fma");
  EXPECT_EQ(missingFeatures({"avx2", "avx512f", "fma"}, {"avx2", "fma"}),
            (std::vector<std::string>{"avx512f"}));
  EXPECT_EQ(commonFeatures({{"avx2", "avx512f", "fma"}, {"avx2", "fma"},
                            {"avx2", "sse4.2"}}),
            (std::vector<std::string>{"avx2"}));
}

} // namespace
} // namespace kiln
