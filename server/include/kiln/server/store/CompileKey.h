//===- CompileKey.h - identity of a compilation -----------------*- C++ -*-===//
//
// This file declares the compile key: the hash that decides whether two
// Compile requests may share one executable.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/compiler.pb.h"
#include "kiln/v1/graph.pb.h"

#include <string>
#include <string_view>

namespace kiln::server {

/// `message` serialized deterministically (map entries sorted), as the key
/// hashes it.
std::string deterministicBytes(const google::protobuf::MessageLite &message);

/// `options` with defaults made explicit (opt_level 0 becomes
/// compiler::kDefaultOptLevel) and dump_stages cleared (it changes what comes
/// back, not the executable), so that equivalent requests produce equal keys.
v1::CompileOptions normalizeCompileOptions(const v1::CompileOptions &options);

/// The graph as it enters the key: name cleared, every parameter digest
/// cleared (weights are not part of the key; parameter names and types are),
/// unknown fields dropped.
v1::Graph canonicalGraphForKey(const v1::Graph &graph);

/// Hex SHA-256 over the deterministic serialization of the canonical graph,
/// the target, the normalised options and the compiler build id, each
/// length-prefixed so that no two different tuples hash the same bytes. A
/// non-empty `salt` (kilnd's --cache-salt / Cache.SetCacheSalt) is mixed in
/// last, so changing it invalidates every existing entry; "" leaves keys as
/// they were before salts existed.
std::string computeCompileKey(const v1::Graph &graph, std::string_view target,
                              const v1::CompileOptions &options,
                              std::string_view compilerBuildId,
                              std::string_view salt = "");

} // namespace kiln::server
