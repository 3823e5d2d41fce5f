//===- KeyExplanation.cpp - why two compile keys differ -------------------===//
//
// This file implements describeCompileKey and keyDifferences: a compile
// key's parts, and the one-line reasons two keys' parts differ.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/KeyExplanation.h"

#include "kiln/common/Digest.h"
#include "kiln/server/store/CompileKey.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include <google/protobuf/util/message_differencer.h>

#include <algorithm>

namespace kiln::server {

namespace {

std::string deterministicSha(const google::protobuf::MessageLite &message) {
  return sha256Hex(deterministicBytes(message));
}

/// The options of the target's machine, which ExplainMiss reports apart.
v1::CompileOptions machineOptions(const v1::CompileOptions &options) {
  v1::CompileOptions machine;
  machine.set_cpu(options.cpu());
  machine.set_cpu_features(options.cpu_features());
  if (options.has_riscv())
    *machine.mutable_riscv() = options.riscv();
  return machine;
}

v1::CompileOptions otherOptions(const v1::CompileOptions &options) {
  v1::CompileOptions rest = options;
  rest.clear_cpu();
  rest.clear_cpu_features();
  rest.clear_riscv();
  return rest;
}

/// "opt_level: 3 here, 2 cached; kernel_library: ..." for two messages.
std::string fieldChanges(const google::protobuf::Message &wanted,
                         const google::protobuf::Message &cached) {
  std::string report;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&report);
  differencer.Compare(cached, wanted);
  // One line per changed field, "modified: opt_level: 2 -> 3".
  std::vector<std::string> lines = absl::StrSplit(report, '\n', absl::SkipEmpty());
  return absl::StrJoin(lines, "; ");
}

std::string quoted(const std::string &text) {
  return text.empty() ? std::string("(none)") : absl::StrCat("'", text, "'");
}

v1::KeyDifference difference(v1::KeyComponent component, std::string detail) {
  v1::KeyDifference out;
  out.set_component(component);
  out.set_detail(std::move(detail));
  return out;
}

std::string graphDifference(const v1::CompileKeyRecord &wanted,
                            const v1::CompileKeyRecord &cached) {
  if (wanted.signature_sha256() != cached.signature_sha256())
    return "the inputs, parameters or outputs differ (names or types)";
  int common = std::min(wanted.nodes_size(), cached.nodes_size());
  for (int i = 0; i < common; ++i) {
    const v1::KeyNode &here = wanted.nodes(i), &there = cached.nodes(i);
    if (here.sha256() == there.sha256())
      continue;
    if (here.op() != there.op())
      return absl::StrCat("node ", i, " '", here.name(), "': ", here.op(),
                          " here, ", there.op(), " ('", there.name(),
                          "') in the cached key");
    return absl::StrCat("node ", i, " '", here.name(), "' (", here.op(),
                        "): other arguments or result types than in the "
                        "cached key");
  }
  return absl::StrCat(wanted.nodes_size(), " nodes here, ", cached.nodes_size(),
                      " in the cached key; the first ", common, " agree");
}

} // namespace

v1::CompileKeyRecord describeCompileKey(const v1::Graph &graph,
                                        std::string_view target,
                                        const v1::CompileOptions &options,
                                        std::string_view compilerBuildId,
                                        std::string_view salt) {
  v1::CompileKeyRecord record;
  record.set_compile_key(
      computeCompileKey(graph, target, options, compilerBuildId, salt));
  record.set_graph_name(graph.name());
  record.set_target(std::string(target));
  *record.mutable_options() = normalizeCompileOptions(options);
  record.set_compiler_build_id(std::string(compilerBuildId));
  record.set_salt(std::string(salt));
  v1::Graph canonical = canonicalGraphForKey(graph);
  for (const v1::Node &node : canonical.nodes()) {
    v1::KeyNode *entry = record.add_nodes();
    entry->set_name(node.outputs_size() ? node.outputs(0).name() : "");
    entry->set_op(node.op());
    entry->set_sha256(deterministicSha(node));
  }
  canonical.clear_nodes();
  record.set_signature_sha256(deterministicSha(canonical));
  return record;
}

std::vector<v1::KeyDifference> keyDifferences(const v1::CompileKeyRecord &wanted,
                                              const v1::CompileKeyRecord &cached) {
  std::vector<v1::KeyDifference> out;
  bool sameGraph = wanted.signature_sha256() == cached.signature_sha256() &&
                   wanted.nodes_size() == cached.nodes_size() &&
                   std::equal(wanted.nodes().begin(), wanted.nodes().end(),
                              cached.nodes().begin(),
                              [](const v1::KeyNode &a, const v1::KeyNode &b) {
                                return a.sha256() == b.sha256();
                              });
  if (!sameGraph)
    out.push_back(difference(v1::KEY_COMPONENT_GRAPH, graphDifference(wanted, cached)));
  if (wanted.target() != cached.target())
    out.push_back(difference(v1::KEY_COMPONENT_TARGET,
                             absl::StrCat("target ", wanted.target(), " here, ",
                                          cached.target(), " cached")));
  v1::CompileOptions wantedRest = otherOptions(wanted.options());
  v1::CompileOptions cachedRest = otherOptions(cached.options());
  if (!google::protobuf::util::MessageDifferencer::Equals(wantedRest, cachedRest))
    out.push_back(difference(v1::KEY_COMPONENT_OPTIONS,
                             absl::StrCat("options (cached -> here): ",
                                          fieldChanges(wantedRest, cachedRest))));
  v1::CompileOptions wantedMachine = machineOptions(wanted.options());
  v1::CompileOptions cachedMachine = machineOptions(cached.options());
  if (!google::protobuf::util::MessageDifferencer::Equals(wantedMachine, cachedMachine)) {
    const v1::CompileOptions &w = wantedMachine, &c = cachedMachine;
    std::string detail =
        w.cpu() != c.cpu() || w.cpu_features() != c.cpu_features()
            ? absl::StrCat("cpu ", quoted(w.cpu()), " ", quoted(w.cpu_features()),
                           " here, ", quoted(c.cpu()), " ", quoted(c.cpu_features()),
                           " cached")
            : absl::StrCat("riscv (cached -> here): ", fieldChanges(w, c));
    out.push_back(difference(v1::KEY_COMPONENT_TARGET_FEATURES, std::move(detail)));
  }
  if (wanted.compiler_build_id() != cached.compiler_build_id())
    out.push_back(difference(v1::KEY_COMPONENT_COMPILER,
                             absl::StrCat("compiler ", wanted.compiler_build_id(),
                                          " here, ", cached.compiler_build_id(),
                                          " cached")));
  if (wanted.salt() != cached.salt())
    out.push_back(difference(v1::KEY_COMPONENT_SALT,
                             absl::StrCat("salt ", quoted(wanted.salt()), " here, ",
                                          quoted(cached.salt()), " cached")));
  return out;
}

} // namespace kiln::server
