//===- CompileWorker.cpp - compiles in processes of their own -------------===//
//
// This file implements compileInWorkerProcess and
// checkSupportInWorkerProcess: a CompileJob file in, a kiln-compile-worker
// process under limits, a CompileJobResult file out, and the worker's fate
// mapped to a status.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/compile/CompileWorker.h"

#include "kiln/common/AtomicFile.h"
#include "kiln/common/ChildProcess.h"
#include "kiln/common/Credentials.h"
#include "kiln/common/Status.h"
#include "kiln/worker/compile_job.pb.h"

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include <unistd.h>

namespace kiln::server {
namespace {

constexpr int kWorkerOutOfMemory = 3;
constexpr const char *kStagePrefix = "kiln-compile-worker: stage ";

/// The last `bytes` of `log`, for error messages.
std::string tail(const std::string &log, size_t bytes = 1500) {
  return log.size() <= bytes ? log : "..." + log.substr(log.size() - bytes);
}

/// Runs `job` in a worker process under the settings' limits. `what` says
/// what the job does ("compiling graph 'g' for cpu"), for errors. A result
/// with a non-zero code becomes that status.
absl::StatusOr<worker::CompileJobResult>
runWorker(const CompileWorkerSettings &settings, const worker::CompileJob &job,
          const std::string &what) {
  ASSIGN_OR_RETURN(std::string suffix, randomHex(8));
  std::filesystem::path dir = settings.scratchDir / ("job-" + suffix);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error)
    return absl::InternalError(absl::StrCat(
        "cannot create the compile worker's folder ", dir.string(), ": ",
        error.message()));
  absl::Cleanup removeDir = [&dir] {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  };
  std::string jobBytes;
  if (!job.SerializeToString(&jobBytes))
    return absl::InternalError("cannot serialize the compile job");
  // Scratch that lives for one job: no fsync.
  RETURN_IF_ERROR(
      writeFileAtomically(dir / "job.pb", jobBytes, Durability::kInTransit));

  std::vector<std::string> args = {settings.binary.string(),
                                   (dir / "job.pb").string(),
                                   (dir / "result.pb").string()};
  if (!settings.debugFault.empty())
    args.insert(args.end(), {"--debug-fault", settings.debugFault});
  std::filesystem::path logPath = dir / "worker.log";
  absl::StatusOr<ChildExit> exit =
      runChildProcess(args, logPath, sandboxedChild(settings.limits, dir));
  // What the failure paths say: which graph, and the stage from the log.
  std::string log, where, jobWhere;
  if (!exit.ok() || !exit->succeeded()) {
    log = readWholeFile(logPath).value_or("");
    std::string stage = lastWorkerStage(log);
    where = absl::StrCat(
        what, stage.empty() ? "" : absl::StrCat(", in stage '", stage, "'"));
    jobWhere = absl::StrCat("the compile ", where);
  }
  // A worker that died compiling a graph's segments (stages "segment N
  // ..."): the caller asks again, one segment per job.
  bool inSegments = lastWorkerStage(log).rfind("segment ", 0) == 0;
  auto marked = [inSegments](absl::Status status) {
    if (inSegments)
      markDiedCompilingSegments(status);
    return status;
  };
  if (!exit.ok()) {
    if (absl::IsDeadlineExceeded(exit.status()))
      return marked(wallClockFailure(settings.limits, jobWhere));
    return exit.status();
  }
  if (exit->succeeded()) {
    worker::CompileJobResult result;
    absl::StatusOr<std::string> bytes = readWholeFile(dir / "result.pb");
    if (!bytes.ok() || !result.ParseFromString(*bytes))
      return absl::InternalError(absl::StrCat(
          what, ": the compile worker exited without a readable result"));
    if (result.code() != 0) {
      absl::Status failed(static_cast<absl::StatusCode>(result.code()),
                          result.message());
      // An UNIMPLEMENTED compile answers placement's question too.
      if (result.node_support_size() > 0) {
        worker::CompileJobResult carried;
        carried.mutable_node_support()->Swap(result.mutable_node_support());
        carried.mutable_segments()->Swap(result.mutable_segments());
        attachPlacement(failed, carried);
      }
      return failed;
    }
    return result;
  }
  if (std::optional<absl::Status> limit =
          limitFailure(*exit, settings.limits, kWorkerOutOfMemory, jobWhere))
    return marked(*limit);
  spdlog::error("compile worker {} {}; its log:\n{}", settings.binary.string(),
                exit->describe(), tail(log, 8000));
  return marked(absl::InternalError(absl::StrCat(
      "the compiler crashed ", where, " (its worker process ",
      exit->describe(), "); kilnd is unaffected. Worker log: ", tail(log))));
}

worker::CompileJob jobFor(const CompileWorkerSettings &settings,
                          const v1::Graph &graph,
                          const compiler::CompileOptions &options) {
  worker::CompileJob job;
  *job.mutable_graph() = graph;
  job.set_target(options.target);
  *job.mutable_options() = options.options;
  job.set_dump_stages(options.dumpStages);
  for (const std::string &op : options.debugMiscompileOps)
    job.add_debug_miscompile_ops(op);
  if (options.placement) {
    job.mutable_placement()->set_fallback(v1::FALLBACK_POLICY_CPU);
    job.mutable_placement()->set_max_fallback_fraction(
        options.placement->maxFallbackFraction);
    // Half of the tighter limit for starting segment compiles: one that
    // starts before it still has the other half to finish in (a limit of 0
    // or less is none).
    constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
    auto millis = [](int64_t seconds) {
      return seconds <= 0 ? kNone
                          : seconds > kNone / 1000 ? kNone : seconds * 1000;
    };
    int64_t limitMs = std::min(millis(settings.limits.wallTimeout.count()),
                               millis(settings.limits.cpuSeconds));
    int64_t budgetMs = limitMs == kNone ? 0 : std::max<int64_t>(limitMs / 2, 1);
    if (options.placement->segmentBudget.count() > 0)
      budgetMs = budgetMs == 0 ? options.placement->segmentBudget.count()
                               : std::min<int64_t>(budgetMs,
                                                   options.placement->segmentBudget.count());
    job.set_segment_budget_ms(static_cast<uint32_t>(
        std::min<int64_t>(budgetMs, std::numeric_limits<uint32_t>::max())));
  }
  return job;
}

absl::StatusOr<compiler::CompiledExecutable>
compileJob(const CompileWorkerSettings &settings, const v1::Graph &graph,
           const compiler::CompileOptions &options) {
  ASSIGN_OR_RETURN(
      worker::CompileJobResult result,
      runWorker(settings, jobFor(settings, graph, options),
                absl::StrCat("compiling graph '", graph.name(), "' for ",
                             options.target)));
  return executableFrom(std::move(result));
}

absl::StatusOr<std::vector<compiler::NodeSupport>>
checkSupportJob(const CompileWorkerSettings &settings, const v1::Graph &graph,
                const compiler::CompileOptions &options) {
  worker::CompileJob job = jobFor(settings, graph, options);
  job.clear_placement();
  job.set_check_node_support(true);
  std::string what = absl::StrCat("checking which nodes of graph '",
                                  graph.name(), "' ", options.target,
                                  " supports");
  ASSIGN_OR_RETURN(worker::CompileJobResult result,
                   runWorker(settings, job, what));
  if (result.node_support_size() != graph.nodes_size())
    return absl::InternalError(absl::StrCat(
        what, ": the worker answered for ", result.node_support_size(),
        " nodes, the graph has ", graph.nodes_size()));
  return nodeSupportFrom(result);
}

} // namespace

absl::Status prepareCompileWorkers(const CompileWorkerSettings &settings) {
  if (::access(settings.binary.c_str(), X_OK) != 0)
    return absl::FailedPreconditionError(absl::StrCat(
        "--compile-worker ", settings.binary.string(),
        " is not an executable file (kilnd compiles only in worker processes; "
        "build kiln-compile-worker or point --compile-worker at it)"));
  std::error_code error;
  std::filesystem::remove_all(settings.scratchDir, error);
  if (!error)
    std::filesystem::create_directories(settings.scratchDir, error);
  if (error)
    return absl::InternalError(absl::StrCat("cannot create ",
                                            settings.scratchDir.string(), ": ",
                                            error.message()));
  return absl::OkStatus();
}

std::string lastWorkerStage(const std::string &log) {
  size_t at = log.rfind(kStagePrefix);
  if (at == std::string::npos)
    return "";
  at += std::strlen(kStagePrefix);
  return log.substr(at, log.find('\n', at) - at);
}

CompilerFn compileInWorkerProcess(CompileWorkerSettings settings) {
  return [settings = std::move(settings)](
             const v1::Graph &graph, const compiler::CompileOptions &options) {
    return compileJob(settings, graph, options);
  };
}

NodeSupportFn checkSupportInWorkerProcess(CompileWorkerSettings settings) {
  return [settings = std::move(settings)](
             const v1::Graph &graph, const compiler::CompileOptions &options) {
    return checkSupportJob(settings, graph, options);
  };
}

} // namespace kiln::server
