//===- TorchScriptImport.h - TorchScript archive -> kiln.v1.Graph -*- C++ -*-===//
//
// kilnd converts TorchScript archives with the kiln-torchscript-import tool,
// run as a child process: libtorch (pre-C++11 ABI) never loads into kilnd.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/compile/CompileSandbox.h"
#include "kiln/server/store/ContentStore.h"
#include "kiln/v1/compiler.pb.h"

#include "absl/status/statusor.h"

#include <chrono>
#include <filesystem>

namespace kiln::server {

/// Where kilnd finds kiln-torchscript-import: $KILN_TORCHSCRIPT_IMPORT, else
/// next to the running executable.
std::filesystem::path torchScriptImportTool();

/// Converts `module` into a Graph: runs `tool` on the archive in a temporary
/// folder, parses the graph it writes (protobuf JSON), puts each weight into
/// `store` and sets the parameters' digests. INVALID_ARGUMENT for an archive
/// or input types the tool rejects, UNIMPLEMENTED for constructs it cannot
/// convert (both carry the tool's message, which names the node),
/// DEADLINE_EXCEEDED past `timeout`, INTERNAL when the tool is missing or
/// fails otherwise. Successful conversions are remembered (per process, the
/// latest 64, keyed by tool, archive digest and input types) and reused while
/// their weights are in `store`.
absl::StatusOr<v1::Graph>
importTorchScript(const v1::TorchScriptModule &module, ContentStore &store,
                  const std::filesystem::path &tool,
                  const CompileLimits &limits = {});

/// A compile error about a graph converted from TorchScript, with the
/// TorchScript values named: a message naming nodes ("node N:" or
/// "node N '...'") gains " [TorchScript value %<name>]" for the value each
/// defines (" [TorchScript values %a, %b]" for several).
absl::Status nameTorchScriptValue(const absl::Status &status,
                                  const v1::Graph &graph);

} // namespace kiln::server
