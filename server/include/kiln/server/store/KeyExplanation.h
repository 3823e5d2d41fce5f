//===- KeyExplanation.h - why two compile keys differ -----------*- C++ -*-===//
//
// This file declares the parts a compile key is computed from, as a
// CompileKeyRecord kept beside each cache entry, and the comparison of two
// records that Cache.ExplainMiss reports: which components differ, and how.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/cache.pb.h"

#include <string_view>
#include <vector>

namespace kiln::server {

/// The parts computeCompileKey hashes for (graph, target, options, build,
/// salt), with the key itself: the graph's signature and each node hashed
/// apart, so that a comparison can name the first node that differs.
v1::CompileKeyRecord describeCompileKey(const v1::Graph &graph,
                                        std::string_view target,
                                        const v1::CompileOptions &options,
                                        std::string_view compilerBuildId,
                                        std::string_view salt);

/// The components in which `cached` differs from `wanted`, in KeyComponent
/// order, each with one line saying how ("here" is `wanted`).
std::vector<v1::KeyDifference> keyDifferences(const v1::CompileKeyRecord &wanted,
                                              const v1::CompileKeyRecord &cached);

} // namespace kiln::server
