//===- PlacedCompile.cpp - compile with a placement policy ----------------===//
//
// This file implements compilePlaced(): the whole-graph compile first, then,
// for a graph with ops the target lacks, the capability check, the policy,
// the partition and one cached compile per target segment.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/compile/PlacedCompile.h"

#include "kiln/common/NodeName.h"
#include "kiln/common/Status.h"
#include "kiln/common/TensorTypes.h"
#include "kiln/Compiler/GraphPartition.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

namespace kiln::server {
namespace {

using compiler::GraphSegment;
using compiler::partitionGraph;

/// How many unsupported nodes an error message names before "and N more".
constexpr int kNamedNodes = 10;

std::string nodeLabel(const v1::Graph &graph, int index) {
  const v1::Node &node = graph.nodes(index);
  return absl::StrCat("node ", index, " '", nodeName(node), "' (", node.op(), ")");
}

v1::NodePlacement *addNode(v1::PlacementReport &report, const v1::Graph &graph,
                           int index) {
  v1::NodePlacement *entry = report.add_nodes();
  const v1::Node &node = graph.nodes(index);
  entry->set_node(index);
  entry->set_name(nodeName(node));
  entry->set_op(node.op());
  entry->set_placement(v1::PLACEMENT_TARGET);
  entry->set_segment(-1);
  return entry;
}

void fillSegment(v1::Segment &segment, const CompileOutcome &outcome) {
  *segment.mutable_executable() = outcome.executable;
  *segment.mutable_manifest() = outcome.manifest;
  segment.set_compile_key(outcome.key);
  segment.set_cache_hit(outcome.cacheHit);
}

/// Every node's unit: a target node's from its layer in `opReport` (the
/// target itself where the layer names none), a CPU node's PyTorch; none
/// for a node that does not run (segment -1) or has no layer (no code of
/// its own, e.g. a full slice).
void markUnits(v1::PlacementReport &report, const v1::OpReport &opReport) {
  std::unordered_map<std::string, std::string> unitOf;
  for (const v1::OpReportLayer &layer : opReport.layers())
    unitOf.emplace(layer.name(), layer.unit());
  for (v1::NodePlacement &node : *report.mutable_nodes()) {
    if (node.segment() < 0)
      continue;
    if (node.placement() == v1::PLACEMENT_CPU) {
      node.set_unit("pytorch");
      continue;
    }
    if (auto it = unitOf.find(node.name()); it != unitOf.end())
      node.set_unit(it->second.empty() ? report.target() : it->second);
  }
}

/// The report of a graph that compiled whole: one target segment.
v1::PlacementReport wholePlacement(const v1::Graph &graph,
                                   const std::string &target,
                                   const CompileOutcome &outcome) {
  v1::PlacementReport report;
  report.set_target(target);
  v1::Segment &segment = *report.add_segments();
  segment.set_placement(v1::PLACEMENT_TARGET);
  for (int i = 0; i < graph.nodes_size(); ++i) {
    addNode(report, graph, i)->set_segment(0);
    segment.add_nodes(i);
  }
  std::set<std::string> inputs;
  for (const v1::Parameter &param : graph.parameters())
    inputs.insert(param.value().name());
  for (const v1::Value &input : graph.inputs())
    inputs.insert(input.name());
  for (const std::string &name : inputs)
    segment.add_inputs(name);
  std::set<std::string> seen;
  for (const std::string &name : graph.outputs())
    if (seen.insert(name).second && !inputs.count(name))
      segment.add_outputs(name);
  fillSegment(segment, outcome);
  report.set_target_nodes(graph.nodes_size());
  markUnits(report, outcome.opReport);
  return report;
}

/// A report listing every node with its placement and reason (no segments
/// yet): what the capability check found, as the compile cache stores it.
v1::PlacementReport placeNodes(const v1::Graph &graph, const std::string &target,
                               const std::vector<compiler::NodeSupport> &support) {
  v1::PlacementReport report;
  report.set_target(target);
  for (int i = 0; i < graph.nodes_size(); ++i) {
    v1::NodePlacement *entry = addNode(report, graph, i);
    if (!support[i].supported) {
      entry->set_placement(v1::PLACEMENT_CPU);
      entry->set_reason(support[i].reason);
    }
  }
  return report;
}

/// Whether `compiled`, carried for `segment`, has an artifact and the
/// segment's signature: its parameters, inputs and outputs, in order, by
/// name and type. A carried executable that does not is not stored (a
/// worker that cut or compiled another graph); the segment is compiled on
/// its own instead.
bool fitsSegment(const worker::CompileJobResult &compiled,
                 const GraphSegment &segment) {
  const v1::Graph &graph = segment.graph;
  std::unordered_map<std::string, const v1::TensorType *> typeOf;
  std::vector<std::string> parameterNames, inputNames;
  for (const v1::Parameter &param : graph.parameters()) {
    parameterNames.push_back(param.value().name());
    typeOf[param.value().name()] = &param.value().type();
  }
  for (const v1::Value &input : graph.inputs()) {
    inputNames.push_back(input.name());
    typeOf[input.name()] = &input.type();
  }
  for (const v1::Node &node : graph.nodes())
    for (const v1::Value &output : node.outputs())
      typeOf[output.name()] = &output.type();
  auto matches = [&](const auto &arguments, const auto &names) {
    return arguments.size() == static_cast<int>(names.size()) &&
           std::equal(arguments.begin(), arguments.end(), names.begin(),
                      [&](const v1::ManifestArgument &arg, const std::string &name) {
                        auto it = typeOf.find(name);
                        return arg.name() == name && it != typeOf.end() &&
                               google::protobuf::util::MessageDifferencer::Equals(
                                   arg.type(), *it->second);
                      });
  };
  const v1::ExecutableManifest &manifest = compiled.manifest();
  return !compiled.artifact().empty() &&
         matches(manifest.parameters(), parameterNames) &&
         matches(manifest.inputs(), inputNames) &&
         matches(manifest.outputs(), graph.outputs());
}

/// The capability check's findings back from a stored report.
std::vector<compiler::NodeSupport> supportOf(const v1::PlacementReport &report) {
  std::vector<compiler::NodeSupport> support;
  for (const v1::NodePlacement &node : report.nodes())
    support.push_back({node.placement() != v1::PLACEMENT_CPU, node.reason()});
  return support;
}

/// "target 'cpu' cannot compile 2 of 14 nodes: node 3 'cummax' (...): why; ..."
std::string describeUnsupported(const v1::Graph &graph, const std::string &target,
                                const std::vector<compiler::NodeSupport> &support) {
  std::vector<std::string> named;
  int unsupported = 0;
  for (int i = 0; i < graph.nodes_size(); ++i) {
    if (support[i].supported)
      continue;
    if (++unsupported <= kNamedNodes)
      named.push_back(absl::StrCat(nodeLabel(graph, i), ": ", support[i].reason));
  }
  std::string text = absl::StrCat("target '", target, "' cannot compile ",
                                  unsupported, " of ", graph.nodes_size(),
                                  " nodes: ", absl::StrJoin(named, "; "));
  if (unsupported > kNamedNodes)
    absl::StrAppend(&text, "; and ", unsupported - kNamedNodes, " more");
  return text;
}

/// The target segments' op report layers in graph order, with totals; the
/// parameter bytes count each parameter the segments read once.
v1::OpReport mergeOpReports(const v1::Graph &graph,
                            const std::vector<v1::OpReport> &reports,
                            const std::vector<GraphSegment> &segments) {
  std::unordered_map<std::string, int> nodeOf;
  for (int i = 0; i < graph.nodes_size(); ++i)
    if (!nodeName(graph.nodes(i)).empty())
      nodeOf[nodeName(graph.nodes(i))] = i;
  std::vector<std::pair<int, const v1::OpReportLayer *>> layers;
  for (const v1::OpReport &report : reports)
    for (const v1::OpReportLayer &layer : report.layers()) {
      auto it = nodeOf.find(layer.name());
      layers.emplace_back(it == nodeOf.end() ? graph.nodes_size() : it->second,
                          &layer);
    }
  std::stable_sort(layers.begin(), layers.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  v1::OpReport merged;
  v1::OpReportLayer &totals = *merged.mutable_totals();
  totals.set_name("total");
  for (const auto &[node, layer] : layers) {
    *merged.add_layers() = *layer;
    totals.set_macs(totals.macs() + layer->macs());
    totals.set_flops(totals.flops() + layer->flops());
    totals.set_activation_in_bytes(totals.activation_in_bytes() +
                                   layer->activation_in_bytes());
    totals.set_activation_out_bytes(totals.activation_out_bytes() +
                                    layer->activation_out_bytes());
    totals.set_bytes_read(totals.bytes_read() + layer->bytes_read());
    totals.set_bytes_written(totals.bytes_written() + layer->bytes_written());
  }
  std::set<std::string> read;
  for (const GraphSegment &segment : segments)
    if (segment.onTarget)
      read.insert(segment.inputs.begin(), segment.inputs.end());
  for (const v1::Parameter &param : graph.parameters())
    if (read.count(param.value().name()))
      if (absl::StatusOr<int64_t> bytes = byteSize(param.value().type()); bytes.ok())
        totals.set_parameter_bytes(totals.parameter_bytes() + *bytes);
  return merged;
}

} // namespace

namespace {
/// The payload's type URL: a CompileJobResult holding only node_support and
/// segments.
constexpr const char *kPlacementPayload =
    "type.googleapis.com/kiln.worker.CompileJobResult";
} // namespace

void attachPlacement(absl::Status &status,
                     const worker::CompileJobResult &carried) {
  std::string bytes = carried.SerializeAsString();
  status.SetPayload(kPlacementPayload, absl::Cord(absl::string_view(bytes)));
}

std::optional<worker::CompileJobResult>
carriedPlacement(const absl::Status &status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kPlacementPayload);
  worker::CompileJobResult carried;
  if (!payload || !carried.ParseFromString(std::string(*payload)))
    return std::nullopt;
  return carried;
}

namespace {
constexpr const char *kDiedInSegmentsPayload =
    "type.googleapis.com/kiln.worker.DiedCompilingSegments";
} // namespace

void markDiedCompilingSegments(absl::Status &status) {
  status.SetPayload(kDiedInSegmentsPayload, absl::Cord());
}

bool diedCompilingSegments(const absl::Status &status) {
  return status.GetPayload(kDiedInSegmentsPayload).has_value();
}

void attachNodeSupport(absl::Status &status,
                       const std::vector<compiler::NodeSupport> &support) {
  worker::CompileJobResult carried;
  for (const compiler::NodeSupport &node : support) {
    worker::NodeSupport *entry = carried.add_node_support();
    entry->set_supported(node.supported);
    entry->set_reason(node.reason);
  }
  attachPlacement(status, carried);
}

absl::Status validatePlacementPolicy(const v1::PlacementPolicy &policy) {
  if (!v1::FallbackPolicy_IsValid(policy.fallback()))
    return absl::InvalidArgumentError(absl::StrCat(
        "placement.fallback: unknown value ", policy.fallback(),
        " (FALLBACK_POLICY_ERROR or FALLBACK_POLICY_CPU)"));
  if (!policy.has_max_fallback_fraction())
    return absl::OkStatus();
  double max = policy.max_fallback_fraction();
  if (!std::isfinite(max) || max < 0.0 || max > 1.0)
    return absl::InvalidArgumentError(absl::StrCat(
        "placement.max_fallback_fraction must be in 0..1, got ", max));
  if (policy.fallback() != v1::FALLBACK_POLICY_CPU)
    return absl::InvalidArgumentError(
        "placement.max_fallback_fraction is set but placement.fallback is not "
        "FALLBACK_POLICY_CPU: nothing may fall back");
  return absl::OkStatus();
}

absl::StatusOr<PlacedOutcome>
compilePlaced(CompileCache &cache, const NodeSupportFn &nodeSupport,
              const v1::Graph &graph, const std::string &target,
              const v1::CompileOptions &options,
              const v1::PlacementPolicy &policy) {
  std::string key = cache.keyFor(graph, target, options);
  std::vector<compiler::NodeSupport> support;
  // Target segments the whole graph's compile compiled along with it.
  std::vector<worker::CompiledSegment> carriedSegments;
  // A graph known not to compile whole goes straight to its stored check.
  if (std::optional<v1::PlacementReport> known = cache.lookupPlacement(key);
      known && known->nodes_size() == graph.nodes_size()) {
    support = supportOf(*known);
  } else {
    CompileHints hints;
    if (policy.fallback() == v1::FALLBACK_POLICY_CPU) {
      hints.placement.emplace();
      if (policy.has_max_fallback_fraction())
        hints.placement->maxFallbackFraction = policy.max_fallback_fraction();
    }
    absl::StatusOr<CompileOutcome> whole = cache.compile(graph, target, options, hints);
    // (Whatever this request's policy: it may have joined the flight of one
    // that asked for segments.)
    if (!whole.ok() && diedCompilingSegments(whole.status())) {
      // The segments did not fit one worker's limits together: ask again
      // without them (the node support comes back alone), and compile each
      // segment in a worker of its own below.
      spdlog::warn("compile of graph '{}' for {} died compiling its segments ({}); "
                   "compiling them one per worker",
                   graph.name(), target, std::string(whole.status().message()));
      whole = cache.compile(graph, target, options);
    }
    if (whole.ok()) {
      PlacedOutcome outcome;
      outcome.placement = wholePlacement(graph, target, *whole);
      outcome.opReport = whole->opReport;
      outcome.cacheHit = whole->cacheHit;
      outcome.remoteHit = whole->remoteHit;
      outcome.key = whole->key;
      outcome.timings = whole->timings;
      outcome.whole = *std::move(whole);
      return outcome;
    }
    // A graph with symbolic sizes compiles whole or not at all: its
    // segments would need symbols their own inputs bind.
    if (!absl::IsUnimplemented(whole.status()) || !nodeSupport ||
        graph.symbols_size() > 0)
      return whole.status();
    if (std::optional<worker::CompileJobResult> carried =
            carriedPlacement(whole.status());
        carried && carried->node_support_size() == graph.nodes_size()) {
      support = nodeSupportFrom(*carried); // the compile answered it in the same call
      carriedSegments.assign(
          std::make_move_iterator(carried->mutable_segments()->begin()),
          std::make_move_iterator(carried->mutable_segments()->end()));
    } else {
      compiler::CompileOptions checkOptions;
      checkOptions.target = target;
      checkOptions.options = options;
      ASSIGN_OR_RETURN(support, nodeSupport(graph, checkOptions));
    }
    if (std::all_of(support.begin(), support.end(),
                    [](const compiler::NodeSupport &node) { return node.supported; }))
      return whole.status(); // no single node is the cause: the compile's error
    if (absl::Status stored =
            cache.storePlacement(key, placeNodes(graph, target, support));
        !stored.ok())
      spdlog::warn("compile cache: cannot store the placement of {}: {}", key,
                   std::string(stored.message()));
  }
  int cpuNodes = static_cast<int>(std::count_if(
      support.begin(), support.end(),
      [](const compiler::NodeSupport &node) { return !node.supported; }));
  std::string unsupported = describeUnsupported(graph, target, support);
  if (policy.fallback() != v1::FALLBACK_POLICY_CPU)
    return absl::UnimplementedError(absl::StrCat(
        unsupported, ". To run them on the host CPU instead, compile with "
                     "placement.fallback = FALLBACK_POLICY_CPU (Python: "
                     "fallback=\"cpu\")"));
  double fraction = static_cast<double>(cpuNodes) / graph.nodes_size();
  if (policy.has_max_fallback_fraction() &&
      fraction > policy.max_fallback_fraction())
    return absl::UnimplementedError(absl::StrFormat(
        "%d of %d nodes (%.3g) would fall back to the CPU, over "
        "placement.max_fallback_fraction %.3g: %s",
        cpuNodes, graph.nodes_size(), fraction, policy.max_fallback_fraction(),
        unsupported));

  std::vector<bool> onTarget(graph.nodes_size());
  for (int i = 0; i < graph.nodes_size(); ++i)
    onTarget[i] = support[i].supported;
  std::vector<GraphSegment> segments = partitionGraph(graph, onTarget);
  // A carried segment is used only where kilnd cut the same one.
  std::unordered_map<int, worker::CompiledSegment *> carriedFor;
  for (worker::CompiledSegment &carried : carriedSegments)
    if (carried.segment() >= 0 &&
        carried.segment() < static_cast<int>(segments.size()) &&
        segments[carried.segment()].onTarget &&
        std::equal(carried.nodes().begin(), carried.nodes().end(),
                   segments[carried.segment()].nodes.begin(),
                   segments[carried.segment()].nodes.end()))
      carriedFor[carried.segment()] = &carried;

  PlacedOutcome outcome;
  outcome.partitioned = true;
  outcome.cacheHit = true;
  outcome.key = key;
  outcome.placement = placeNodes(graph, target, support);
  v1::PlacementReport &report = outcome.placement;
  std::vector<v1::OpReport> opReports;
  for (int s = 0; s < static_cast<int>(segments.size()); ++s) {
    const GraphSegment &segment = segments[s];
    v1::Segment &entry = *report.add_segments();
    entry.set_placement(segment.onTarget ? v1::PLACEMENT_TARGET
                                         : v1::PLACEMENT_CPU);
    for (int node : segment.nodes) {
      entry.add_nodes(node);
      report.mutable_nodes(node)->set_segment(s);
    }
    for (const std::string &name : segment.inputs)
      entry.add_inputs(name);
    for (const std::string &name : segment.outputs)
      entry.add_outputs(name);
    if (!segment.onTarget)
      continue;
    auto segmentError = [&](const absl::Status &status) {
      return absl::Status(
          status.code(),
          absl::StrCat("target segment ", s, " (", segment.nodes.size(),
                       " nodes, from ", nodeLabel(graph, segment.nodes.front()),
                       "): ", status.message()));
    };
    CompileHints hints;
    std::optional<compiler::CompiledExecutable> precompiled;
    if (auto it = carriedFor.find(s); it != carriedFor.end()) {
      worker::CompileJobResult &carried = *it->second->mutable_result();
      auto code = static_cast<absl::StatusCode>(carried.code());
      // The compiler's verdict on the segment is the answer; a failure that
      // may be the shared process's (INTERNAL from the linker, say) gets a
      // worker of its own below.
      if (code == absl::StatusCode::kInvalidArgument ||
          code == absl::StatusCode::kUnimplemented)
        return segmentError(absl::Status(code, carried.message()));
      if (code == absl::StatusCode::kOk && fitsSegment(carried, segment)) {
        precompiled = executableFrom(std::move(carried));
        hints.precompiled = &*precompiled;
        hints.precompiledUs = it->second->compile_us();
      } else if (code == absl::StatusCode::kOk) {
        spdlog::warn("compile of graph '{}': the executable carried for segment {} "
                     "does not have its signature; compiling it on its own",
                     graph.name(), s);
      }
    }
    absl::StatusOr<CompileOutcome> compiled =
        cache.compile(segment.graph, target, options, hints);
    if (!compiled.ok())
      return segmentError(compiled.status());
    fillSegment(entry, *compiled);
    outcome.cacheHit = outcome.cacheHit && compiled->cacheHit;
    outcome.remoteHit = outcome.remoteHit || compiled->remoteHit;
    outcome.timings.set_queue_us(outcome.timings.queue_us() +
                                 compiled->timings.queue_us());
    outcome.timings.set_compile_us(outcome.timings.compile_us() +
                                   compiled->timings.compile_us());
    opReports.push_back(compiled->opReport);
  }
  report.set_cpu_nodes(cpuNodes);
  report.set_target_nodes(graph.nodes_size() - cpuNodes);
  report.set_fallback_fraction(fraction);
  outcome.opReport = mergeOpReports(graph, opReports, segments);
  markUnits(report, outcome.opReport);
  return outcome;
}

std::vector<compiler::NodeSupport>
nodeSupportFrom(const worker::CompileJobResult &result) {
  std::vector<compiler::NodeSupport> support;
  for (const worker::NodeSupport &node : result.node_support())
    support.push_back({node.supported(), node.reason()});
  return support;
}

compiler::CompiledExecutable executableFrom(worker::CompileJobResult result) {
  compiler::CompiledExecutable compiled;
  compiled.artifact = std::move(*result.mutable_artifact());
  compiled.manifest = std::move(*result.mutable_manifest());
  compiled.opReport = std::move(*result.mutable_op_report());
  for (worker::StageText &text : *result.mutable_stages())
    compiled.stages.push_back(
        {std::move(*text.mutable_stage()), std::move(*text.mutable_text())});
  return compiled;
}

} // namespace kiln::server
