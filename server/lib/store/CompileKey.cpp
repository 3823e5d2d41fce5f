//===- CompileKey.cpp - identity of a compilation -------------------------===//
//
// This file implements the compile key over a canonical, weight-free
// serialization of the graph.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/CompileKey.h"

#include "kiln/Compiler/Compile.h"
#include "kiln/common/Digest.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstdint>

namespace kiln::server {

std::string deterministicBytes(const google::protobuf::MessageLite &message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

namespace {

// Feeds "<8-byte little-endian length><bytes>" so fields cannot run together.
void updateField(Sha256 &sha, std::string_view bytes) {
  uint64_t size = bytes.size();
  char prefix[8];
  for (int i = 0; i < 8; ++i)
    prefix[i] = static_cast<char>((size >> (8 * i)) & 0xff);
  sha.update(std::string_view(prefix, sizeof(prefix)));
  sha.update(bytes);
}

} // namespace

v1::CompileOptions normalizeCompileOptions(const v1::CompileOptions &options) {
  v1::CompileOptions normalized = options;
  normalized.DiscardUnknownFields();
  if (normalized.opt_level() == 0)
    normalized.set_opt_level(compiler::kDefaultOptLevel);
  normalized.clear_dump_stages();
  return normalized;
}

v1::Graph canonicalGraphForKey(const v1::Graph &graph) {
  v1::Graph canonical = graph;
  canonical.DiscardUnknownFields();
  canonical.clear_name();
  for (v1::Parameter &parameter : *canonical.mutable_parameters())
    parameter.clear_digest();
  return canonical;
}

std::string computeCompileKey(const v1::Graph &graph, std::string_view target,
                              const v1::CompileOptions &options,
                              std::string_view compilerBuildId,
                              std::string_view salt) {
  Sha256 sha;
  updateField(sha, "kiln-compile-key-v1");
  updateField(sha, deterministicBytes(canonicalGraphForKey(graph)));
  updateField(sha, target);
  updateField(sha, deterministicBytes(normalizeCompileOptions(options)));
  updateField(sha, compilerBuildId);
  if (!salt.empty())
    updateField(sha, salt);
  return sha.finishHex();
}

} // namespace kiln::server
