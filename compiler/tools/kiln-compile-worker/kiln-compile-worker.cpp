//===- kiln-compile-worker.cpp - one compile, in a process of its own -----===//
//
// This file implements kiln-compile-worker, the process kilnd runs each
// compile in, and placement's per-node capability check: it reads a
// kiln.worker.CompileJob, compiles (or checks its nodes), and writes a
// CompileJobResult. kilnd starts it with CPU-time and address-space limits
// (RLIMIT_CPU, RLIMIT_AS), a wall-clock limit and a minimal environment.
// A crash, a runaway or an out-of-memory here ends this process, not kilnd.
// It reports each stage it enters on stderr, so kilnd can name the stage a
// crash happened in.
//
// Exit status: 0 when the result file was written (the compile itself may
// have failed: the result says how), 2 for a bad command line, 3 when memory
// ran out, 1 for anything else.
//
//===----------------------------------------------------------------------===//
#include "kiln/Compiler/Compile.h"
#include "kiln/Compiler/NodeSupport.h"
#include "kiln/Compiler/SegmentCompile.h"
#include "kiln/worker/compile_job.pb.h"

#include "llvm/Support/ErrorHandling.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

constexpr int kExitOutOfMemory = 3;
const char *currentStage = "start";

/// Async-signal-safe write of the out-of-memory report, then exit.
[[noreturn]] void outOfMemory() {
  const char *head = "kiln-compile-worker: out of memory in stage ";
  (void)!::write(STDERR_FILENO, head, std::strlen(head));
  (void)!::write(STDERR_FILENO, currentStage, std::strlen(currentStage));
  (void)!::write(STDERR_FILENO, "\n", 1);
  ::_exit(kExitOutOfMemory);
}

/// Testing aid (kilnd --debug-compile-fault KIND:OP): a fault on entering
/// codegen, in graphs that contain OP only.
void injectFault(const std::string &fault) {
  if (fault == "crash")
    std::raise(SIGSEGV);
  if (fault == "oom") {
    std::vector<std::unique_ptr<char[]>> hoard;
    while (true) {
      hoard.emplace_back(new char[64 << 20]);
      std::memset(hoard.back().get(), 1, 64 << 20);
    }
  }
}

int writeResult(const kiln::worker::CompileJobResult &result,
                const std::string &path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !result.SerializeToOstream(&out) || !out.flush()) {
    std::cerr << "kiln-compile-worker: cannot write the result to " << path << "\n";
    return 1;
  }
  return 0;
}

/// An executable's fields in a result (whole graph or one segment).
void fillResult(kiln::worker::CompileJobResult &result,
                absl::StatusOr<kiln::compiler::CompiledExecutable> compiled) {
  result.set_code(static_cast<int>(compiled.status().code()));
  result.set_message(std::string(compiled.status().message()));
  if (!compiled.ok())
    return;
  result.set_artifact(std::move(compiled->artifact));
  *result.mutable_manifest() = std::move(compiled->manifest);
  *result.mutable_op_report() = std::move(compiled->opReport);
  for (kiln::compiler::StageDump &dump : compiled->stages) {
    kiln::worker::StageText *stage = result.add_stages();
    stage->set_stage(std::move(dump.stage));
    stage->set_text(std::move(dump.text));
  }
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() < 2) {
    std::cerr << "usage: kiln-compile-worker JOB RESULT "
                 "[--debug-fault crash|oom:OP]\n";
    return 2;
  }
  std::string fault;
  for (size_t i = 2; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) {
      std::cerr << "kiln-compile-worker: " << args[i] << " needs a value\n";
      return 2;
    }
    const std::string &flag = args[i], &value = args[i + 1];
    if (flag == "--debug-fault" &&
               (value.rfind("crash:", 0) == 0 || value.rfind("oom:", 0) == 0)) {
      fault = value;
    } else {
      std::cerr << "kiln-compile-worker: unknown flag '" << flag << "'\n";
      return 2;
    }
  }
  std::set_new_handler(outOfMemory);
  llvm::install_bad_alloc_error_handler(
      [](void *, const char *, bool) { outOfMemory(); });

  const auto started = std::chrono::steady_clock::now();
  kiln::worker::CompileJob job;
  {
    std::ifstream in(args[0], std::ios::binary);
    if (!in || !job.ParseFromIstream(&in)) {
      std::cerr << "kiln-compile-worker: cannot read a CompileJob from " << args[0] << "\n";
      return 1;
    }
  }
  kiln::compiler::CompileOptions options;
  options.target = job.target();
  options.options = job.options();
  options.dumpStages = job.dump_stages();
  options.debugMiscompileOps.assign(job.debug_miscompile_ops().begin(),
                                    job.debug_miscompile_ops().end());
  if (job.placement().fallback() == kiln::v1::FALLBACK_POLICY_CPU) {
    kiln::compiler::PlacementRequest request;
    if (job.placement().has_max_fallback_fraction())
      request.maxFallbackFraction = job.placement().max_fallback_fraction();
    request.segmentBudget = std::chrono::milliseconds(job.segment_budget_ms());
    options.placement = request;
  }
  if (!fault.empty()) {
    std::string op = fault.substr(fault.find(':') + 1);
    bool present = false;
    for (const kiln::v1::Node &node : job.graph().nodes())
      present = present || node.op() == op;
    fault = present ? fault.substr(0, fault.find(':')) : "";
  }
  options.onStage = [&fault](const char *stage) {
    // A copy: segment stages ("segment N codegen") are built strings that
    // end with their compile, and the out-of-memory report reads this later.
    static char named[128];
    std::snprintf(named, sizeof(named), "%s", stage);
    currentStage = named;
    std::cerr << "kiln-compile-worker: stage " << stage << std::endl;
    if (!fault.empty() && std::strcmp(stage, "codegen") == 0)
      injectFault(fault);
  };
  kiln::worker::CompileJobResult result;
  // Placement's capability check, copied into the result's node_support
  // too.
  auto checkNodeSupport =
      [&]() -> absl::StatusOr<std::vector<kiln::compiler::NodeSupport>> {
    currentStage = "check-node-support";
    std::cerr << "kiln-compile-worker: stage " << currentStage << std::endl;
    if (!fault.empty())
      injectFault(fault);
    absl::StatusOr<std::vector<kiln::compiler::NodeSupport>> support =
        kiln::compiler::checkNodeSupport(job.graph(), options);
    if (support.ok())
      for (const kiln::compiler::NodeSupport &node : *support) {
        kiln::worker::NodeSupport *entry = result.add_node_support();
        entry->set_supported(node.supported);
        entry->set_reason(node.reason);
      }
    return support;
  };
  if (job.check_node_support()) {
    absl::Status checked = checkNodeSupport().status();
    result.set_code(static_cast<int>(checked.code()));
    result.set_message(std::string(checked.message()));
    return writeResult(result, args[1]);
  }
  absl::StatusOr<kiln::compiler::CompiledExecutable> compiled =
      kiln::compiler::compileGraph(job.graph(), options);
  bool lacksOps = absl::IsUnimplemented(compiled.status());
  fillResult(result, std::move(compiled));
  // A graph the target lacks ops for: placement's question is answered in
  // the same call, so kilnd needs no second worker (a graph with symbolic
  // sizes is never partitioned). What the check cannot answer, kilnd asks
  // again or reports the compile's error. The check shares this process's
  // limits with the compile; it costs an import and one lowering per
  // distinct node (tens of milliseconds for resnet18), and a compile that
  // ends UNIMPLEMENTED stops before code generation. Under a CPU fallback
  // policy the target segments are compiled here too, within the budget.
  if (lacksOps && job.graph().symbols_size() == 0) {
    absl::StatusOr<std::vector<kiln::compiler::NodeSupport>> support =
        checkNodeSupport();
    if (!support.ok()) {
      result.clear_node_support();
    } else if (options.placement) {
      for (kiln::compiler::SegmentCompile &segment :
           kiln::compiler::compileTargetSegments(job.graph(), *support, options,
                                                 *options.placement, started)) {
        kiln::worker::CompiledSegment *entry = result.add_segments();
        entry->set_segment(segment.segment);
        entry->mutable_nodes()->Add(segment.nodes.begin(), segment.nodes.end());
        entry->set_compile_us(segment.compileUs);
        fillResult(*entry->mutable_result(), std::move(segment.compiled));
      }
    }
  }
  return writeResult(result, args[1]);
}
