//===- CompilerService.cpp - kiln.v1.Compiler -----------------------------===//
//
// This file implements CompilerService: it validates a CompileRequest, runs
// it through the CompileCache and reports key, hit and timings.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/CompilerService.h"
#include "kiln/server/api/ParsedUnary.h"

#include "kiln/common/Digest.h"
#include "kiln/common/Status.h"
#include "kiln/server/sched/DeviceFit.h"
#include "kiln/server/api/GrpcStatus.h"
#include "kiln/server/api/RequestScope.h"
#include "kiln/server/compile/TorchScriptImport.h"

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace kiln::server {

CompilerFn withDebugMiscompile(CompilerFn compiler,
                               std::vector<std::string> ops) {
  if (ops.empty())
    return compiler;
  return [compiler = std::move(compiler), ops = std::move(ops)](
             const v1::Graph &graph, const compiler::CompileOptions &options) {
    compiler::CompileOptions perturbed = options;
    perturbed.debugMiscompileOps = ops;
    return compiler(graph, perturbed);
  };
}

std::string debugMiscompileBuildId(const std::string &buildId,
                                   const std::vector<std::string> &ops) {
  if (ops.empty())
    return buildId;
  return absl::StrCat(buildId, "+debug-miscompile=", absl::StrJoin(ops, ","));
}

CompilerService::CompilerService(ContentStore &store, CompileCache &cache,
                                 NodeSupportFn nodeSupport,
                                 OptionsResolverFn resolveOptions,
                                 const DeviceRegistry &registry,
                                 std::vector<std::string> supportedTargets,
                                 DrainGate &gate, ServerMetrics &metrics,
                                 const AccessPolicy &access,
                                 CompileLimits importLimits)
    : store(store), cache(cache), nodeSupport(std::move(nodeSupport)),
      resolveOptions(std::move(resolveOptions)), registry(registry),
      targets(std::move(supportedTargets)), gate(gate), metrics(metrics),
      access(access), importLimits(importLimits) {}

absl::StatusOr<v1::CompileOptions>
CompilerService::effectiveOptions(const v1::CompileRequest &request) const {
  v1::CompileOptions options = request.options();
  const std::vector<v1::Device> devices = registry.listDevices(request.target());
  if (options.cpu().empty() && options.cpu_features().empty()) {
    // Code for the CPU the devices that will run it have, not for whichever
    // machine compiles: the features all of them share.
    ASSIGN_OR_RETURN(std::optional<v1::CompileOptions> shared,
                     sharedCpuOptions(devices));
    if (shared) {
      options.set_cpu(shared->cpu());
      options.set_cpu_features(shared->cpu_features());
    }
  }
  // riscv64: vectors as long as every connected device has, or none when
  // one lacks the V extension (the VLEN is part of the key).
  if (request.target() == "riscv64" && !options.has_riscv()) {
    ASSIGN_OR_RETURN(std::optional<v1::RiscvOptions> shared,
                     sharedRiscvOptions(devices));
    if (shared)
      *options.mutable_riscv() = *shared;
  }
  // acap: host code for the CPU the connected acap devices run it on (a
  // board's Arm cores, or the machine that simulates the array).
  if (request.target() == "acap" && options.acap().host_cpu().empty())
    if (std::optional<std::string> host = sharedAcapHostCpu(devices))
      options.mutable_acap()->set_host_cpu(*host);
  // Convolutions go to the kernel library by default only when every
  // connected device provides it; otherwise all of them get generated code.
  if (request.target() == "cpu" && options.kernel_library().empty() &&
      !allDevicesProvide(devices, "onednn"))
    options.set_kernel_library("none");
  if (!resolveOptions)
    return options;
  return resolveOptions(request.target(), options);
}

absl::Status CompilerService::validate(const v1::CompileRequest &request) const {
  if (std::find(targets.begin(), targets.end(), request.target()) ==
      targets.end())
    return absl::InvalidArgumentError(
        absl::StrCat("unknown target '", request.target(),
                     "'; this daemon compiles for: ",
                     absl::StrJoin(targets, ", ")));
  int optLevel = request.options().opt_level();
  if (optLevel < 0 || optLevel > 3)
    return absl::InvalidArgumentError(absl::StrCat(
        "options.opt_level must be 0..3 (0 means the default), got ", optLevel));
  RETURN_IF_ERROR(validatePlacementPolicy(request.placement()));
  std::vector<std::string> missing;
  for (const v1::Parameter &parameter : request.graph().parameters()) {
    const std::string &name = parameter.value().name();
    if (!parameter.has_digest())
      return absl::InvalidArgumentError(
          absl::StrCat("parameter '", name, "' has no digest"));
    if (absl::Status status = validateDigest(parameter.digest()); !status.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("parameter '", name, "': ", status.message()));
    if (!store.keep(parameter.digest()))
      missing.push_back(
          absl::StrCat("'", name, "' ", formatDigest(parameter.digest())));
  }
  if (!missing.empty())
    return absl::FailedPreconditionError(absl::StrCat(
        missing.size(), " parameter blob(s) not in the store (upload them "
                        "with Blobs.Write first): ",
        absl::StrJoin(missing, ", ")));
  return absl::OkStatus();
}

grpc::Status CompilerService::StreamedCompile(
    grpc::ServerContext *context,
    grpc::ServerUnaryStreamer<v1::CompileRequest, v1::CompileResponse> *stream) {
  RequestScope scope(*context, "kiln.v1.Compiler/Compile", &metrics);
  if (grpc::Status denied = access.admit(*context, "kiln.v1.Compiler/Compile"); !denied.ok())
    return denied;
  return serveParsedUnary(stream, [&](const v1::CompileRequest &request,
                                      v1::CompileResponse &response) {
    return compile(context, &request, &response);
  });
}

grpc::Status CompilerService::compile(grpc::ServerContext *context,
                                      const v1::CompileRequest *request,
                                      v1::CompileResponse *response) {
  auto start = std::chrono::steady_clock::now();
  v1::CompileRequest converted;
  bool fromTorchScript = request->has_torchscript();
  // Every answer is counted under the request's target and timed.
  // Unknown targets share one label value, so clients cannot mint series.
  std::string outcomeLabel = "error";
  std::string targetLabel =
      std::find(targets.begin(), targets.end(), request->target()) !=
              targets.end()
          ? request->target()
          : "unknown";
  absl::Cleanup record = [&] {
    metrics.compiles.labels({targetLabel, outcomeLabel}).inc();
    metrics.compileSeconds.labels({targetLabel})
        .observe(std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - start)
                     .count());
  };
  absl::StatusOr<DrainGate::Ticket> admitted = gate.enter();
  if (!admitted.ok())
    return toGrpcStatus(admitted.status(), currentRequestId());
  // A TorchScript archive is converted to a graph first (weights into the
  // store); the rest of the compile sees only that graph.
  if (fromTorchScript && targetLabel != "unknown") {
    if (request->has_graph() && request->graph().nodes_size())
      return toGrpcStatus(absl::InvalidArgumentError(
                              "give either graph or torchscript, not both"),
                          currentRequestId());
    absl::StatusOr<v1::Graph> graph = importTorchScript(
        request->torchscript(), store, torchScriptImportTool(), importLimits);
    if (!graph.ok()) {
      spdlog::warn("TorchScript compile from {} rejected: {}", context->peer(),
                   std::string(graph.status().message()));
      return toGrpcStatus(graph.status(), currentRequestId());
    }
    converted.set_target(request->target());
    *converted.mutable_options() = request->options();
    *converted.mutable_placement() = request->placement();
    *converted.mutable_graph() = *std::move(graph);
    request = &converted;
  }
  const std::string &graphName = request->graph().name();
  // The parameters stay in the store until this compile is answered.
  BlobPins pins = store.pin();
  for (const v1::Parameter &parameter : request->graph().parameters())
    pins.add(parameter.digest());
  if (absl::Status status = validate(*request); !status.ok()) {
    spdlog::warn("compile of graph '{}' from {} rejected: {}", graphName,
                 context->peer(), std::string(status.message()));
    return toGrpcStatus(status, currentRequestId());
  }
  absl::StatusOr<v1::CompileOptions> options = effectiveOptions(*request);
  if (!options.ok()) {
    spdlog::warn("compile of graph '{}' from {} rejected: {}", graphName,
                 context->peer(), std::string(options.status().message()));
    return toGrpcStatus(options.status(), currentRequestId());
  }
  absl::StatusOr<PlacedOutcome> outcome =
      compilePlaced(cache, nodeSupport, request->graph(), request->target(),
                    *options, request->placement());
  if (!outcome.ok()) {
    spdlog::error("compile of graph '{}' for '{}' failed: {}", graphName,
                  request->target(), std::string(outcome.status().message()));
    if (fromTorchScript)
      return toGrpcStatus(nameTorchScriptValue(outcome.status(), request->graph()),
                          currentRequestId());
    return toGrpcStatus(outcome.status(), currentRequestId());
  }
  int64_t totalUs = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  if (!outcome->partitioned) {
    *response->mutable_executable() = outcome->whole.executable;
    *response->mutable_manifest() = outcome->whole.manifest;
    for (const v1::StageDump &stage : outcome->whole.stages)
      *response->add_stages() = stage;
  } else {
    metrics.partitionedCompiles.labels({targetLabel}).inc();
    metrics.fallbackNodes.labels({targetLabel})
        .inc(outcome->placement.cpu_nodes());
    spdlog::warn("compile graph='{}' target={}: {} of {} nodes fall back to "
                 "the CPU in {} segments (placement policy FALLBACK_POLICY_CPU)",
                 graphName, request->target(), outcome->placement.cpu_nodes(),
                 request->graph().nodes_size(),
                 outcome->placement.segments_size());
  }
  response->set_cache_hit(outcome->cacheHit);
  response->set_remote_cache_hit(outcome->remoteHit);
  *response->mutable_op_report() = outcome->opReport;
  *response->mutable_placement() = outcome->placement;
  if (fromTorchScript)
    *response->mutable_graph() = request->graph();
  outcomeLabel = outcome->cacheHit ? "hit" : "miss";
  response->set_compile_key(outcome->key);
  *response->mutable_timings() = outcome->timings;
  response->mutable_timings()->set_total_us(totalUs);
  spdlog::info("compile graph='{}' target={}{} key={} hit={}{} queue_us={} "
               "compile_us={} total_us={} executable={}",
               graphName, request->target(),
               options->cpu().empty() ? "" : " cpu=" + options->cpu(),
               outcome->key, outcome->cacheHit,
               outcome->remoteHit ? " (remote)" : "",
               outcome->timings.queue_us(), outcome->timings.compile_us(),
               totalUs,
               outcome->partitioned ? std::string("partitioned")
                                    : formatDigest(outcome->whole.executable));
  return toGrpcStatus(absl::OkStatus(), currentRequestId());
}

} // namespace kiln::server
