//===- kiln-compile.cpp - compile a graph file without a daemon -----------===//
//
// This file implements kiln-compile: a kiln.v1.Graph (binary or text proto)
// in, an executable artifact and its manifest out. For build farms and
// debugging; `--dump DIR` writes the module after every pipeline stage.
//
//===----------------------------------------------------------------------===//
#include "kiln/Analysis/OpReport.h"
#include "kiln/Compiler/Compile.h"
#include "kiln/Compiler/GraphPartition.h"
#include "kiln/Compiler/NodeSupport.h"
#include "kiln/Compiler/SegmentCompile.h"
#include "kiln/common/NodeName.h"

#include "google/protobuf/text_format.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

void printUsage() {
  std::cout << "usage: kiln-compile GRAPH -o OUTPUT [options]\n\n"
               "Compiles a kiln.v1.Graph (binary protobuf, or text protobuf when\n"
               "the file ends in .textproto/.pbtxt) into an executable artifact.\n\n"
               "  -o, --output PATH    artifact to write (required); the manifest\n"
               "                       goes to PATH.manifest.textproto\n"
               "  --target NAME        target: cpu (default), riscv64 or mdla (an\n"
               "                       ONNX model for the Micron DLA)\n"
               "  --cpu NAME           cpu: the LLVM CPU to generate code for\n"
               "                       (x86-64-v3, znver3, sapphirerapids, ...) or\n"
               "                       'native' for this machine's (default:\n"
               "                       x86-64-v2, which every x86-64 server runs)\n"
               "  --cpu-features LIST  cpu: extra LLVM features, e.g. +avx512f,-avx2\n"
               "  --kernel-library L   cpu: where convolutions run: onednn (the\n"
               "                       default on x86-64: calls into the library\n"
               "                       the cpu agent installs) or none (generated\n"
               "                       code for every op)\n"
               "  --convolution-algorithm A\n"
               "                       cpu: auto (the default: the agent's fastest,\n"
               "                       Winograd for 3x3 stride-1 convolutions on\n"
               "                       AVX-512) or direct\n"
               "  --riscv-vlen N       riscv64: VLEN in bits the code assumes (128)\n"
               "  --riscv-scalar-only  riscv64: rv64gc without the V extension\n"
               "  --riscv-bare-metal   riscv64: a relocatable object for\n"
               "                       riscv64-unknown-elf instead of a Linux .so\n"
               "  --acap-host-cpu CPU  acap: the host part's CPU: cortex-a72 (the\n"
               "                       Versal's Arm cores; the default) or an\n"
               "                       x86-64 CPU for a simulated array\n"
               "  --acap-array NAME    acap: the AI Engine array (aie-ml-304)\n"
               "  --acap-tiles N       acap: tiles the plan may use (0: all)\n"
               "  --opt-level N        LLVM optimisation level 1..3 (default: 2)\n"
               "  --dump DIR           write the module after each stage to DIR,\n"
               "                       and the op report to DIR/op-report.txt\n"
               "  --emit STAGE         print one stage to stdout instead of writing\n"
               "                       an artifact: aten, linalg, llvm-dialect,\n"
               "                       llvm-ir or asm (for acap: the AI Engine plan,\n"
               "                       then the host code); for mdla: aten or onnx (the\n"
               "                       model as protobuf text) (-o is then optional)\n"
               "  --op-report          print the op report (per layer MACs, FLOPs,\n"
               "                       parameter/activation bytes; totals) to stdout\n"
               "                       (-o is then optional)\n"
               "  --check-support      check each node on its own and print where it\n"
               "                       would run: on the target, or on the CPU with\n"
               "                       the reason (what placement does); compiles\n"
               "                       nothing else\n"
               "  --place              placement's one call: check each node, cut\n"
               "                       the graph into target and CPU segments, and\n"
               "                       compile every target segment; prints the\n"
               "                       plan, and with -o writes segment N to\n"
               "                       OUTPUT.segmentN (and its manifest)\n"
               "  --max-fallback-fraction F  with --place: compile no segment when\n"
               "                       more than this share of the nodes would run\n"
               "                       on the CPU (default 1)\n"
               "  --segment-budget-ms N  with --place: start no segment compile\n"
               "                       later than N ms after kiln-compile started\n"
               "                       (a compile worker's budget; default none)\n"
               "  --help               this text\n";
}

bool readGraph(const std::string &path, kiln::v1::Graph &graph) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "kiln-compile: cannot read " << path << "\n";
    return false;
  }
  std::stringstream contents;
  contents << in.rdbuf();
  bool text = path.ends_with(".textproto") || path.ends_with(".pbtxt");
  bool parsed = text ? google::protobuf::TextFormat::ParseFromString(
                           contents.str(), &graph)
                     : graph.ParseFromString(contents.str());
  if (!parsed)
    std::cerr << "kiln-compile: " << path << " is not a valid kiln.v1.Graph\n";
  return parsed;
}

/// --check-support: one line per node, then the counts. Exit 0 when the
/// check ran (whatever it found), 1 for a malformed graph.
int printNodeSupport(const kiln::v1::Graph &graph,
                     const kiln::compiler::CompileOptions &options) {
  auto support = kiln::compiler::checkNodeSupport(graph, options);
  if (!support.ok()) {
    std::cerr << "kiln-compile: " << support.status() << "\n";
    return 1;
  }
  int supported = 0;
  for (int i = 0; i < graph.nodes_size(); ++i) {
    const kiln::v1::Node &node = graph.nodes(i);
    std::cout << "node " << i << " '"
              << kiln::nodeName(node) << "' ("
              << node.op() << "): ";
    if ((*support)[i].supported) {
      ++supported;
      std::cout << "target\n";
    } else {
      std::cout << "cpu: " << (*support)[i].reason << "\n";
    }
  }
  std::cout << supported << " of " << graph.nodes_size()
            << " nodes run on target " << options.target << "\n";
  return 0;
}

bool writeFile(const std::filesystem::path &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out)
    std::cerr << "kiln-compile: cannot write " << path << "\n";
  return static_cast<bool>(out);
}

/// The artifact at `path` and its manifest beside it.
bool writeExecutable(const std::string &path,
                     const kiln::compiler::CompiledExecutable &compiled) {
  std::string manifest;
  google::protobuf::TextFormat::PrintToString(compiled.manifest, &manifest);
  return writeFile(path, compiled.artifact) &&
         writeFile(path + ".manifest.textproto", manifest);
}

std::string joined(const std::vector<std::string> &names) {
  std::string text;
  for (const std::string &name : names)
    text += (text.empty() ? "" : " ") + name;
  return text;
}

/// --place: one line per segment, then the count. Exit 0 when every target
/// segment compiled, 1 otherwise (or for a malformed graph).
int printPlacementPlan(const kiln::v1::Graph &graph,
                       const kiln::compiler::CompileOptions &options,
                       const std::string &output,
                       const kiln::compiler::PlacementRequest &request) {
  const auto started = std::chrono::steady_clock::now();
  auto support = kiln::compiler::checkNodeSupport(graph, options);
  if (!support.ok()) {
    std::cerr << "kiln-compile: " << support.status() << "\n";
    return 1;
  }
  std::vector<bool> onTarget;
  for (const kiln::compiler::NodeSupport &node : *support)
    onTarget.push_back(node.supported);
  std::vector<kiln::compiler::GraphSegment> segments =
      kiln::compiler::partitionGraph(graph, onTarget);
  int cpuNodes = static_cast<int>(std::count(onTarget.begin(), onTarget.end(), false));
  std::vector<kiln::compiler::SegmentCompile> compiled;
  if (cpuNodes == 0 && !segments.empty()) {
    // The whole graph is the one target segment: what compileGraph makes.
    compiled.push_back({0, segments[0].nodes,
                        kiln::compiler::compileGraph(graph, options), 0});
  } else {
    compiled = kiln::compiler::compileTargetSegments(
        graph, *support, options, request, started);
  }
  if (cpuNodes > request.maxFallbackFraction * graph.nodes_size())
    std::cout << cpuNodes << " of " << graph.nodes_size()
              << " nodes would run on the CPU, over --max-fallback-fraction "
              << request.maxFallbackFraction << ": no segment compiled\n";
  int done = 0;
  for (int s = 0; s < static_cast<int>(segments.size()); ++s) {
    const kiln::compiler::GraphSegment &segment = segments[s];
    std::cout << "segment " << s << " (" << (segment.onTarget ? "target" : "cpu")
              << "): nodes";
    for (int node : segment.nodes)
      std::cout << " " << node;
    std::cout << "; reads " << joined(segment.inputs) << "; writes "
              << joined(segment.outputs);
    if (segment.onTarget) {
      auto it = std::find_if(compiled.begin(), compiled.end(),
                             [s](const auto &entry) { return entry.segment == s; });
      if (it == compiled.end()) {
        std::cout << ": not compiled";
      } else if (!it->compiled.ok()) {
        std::cout << ": " << it->compiled.status();
      } else {
        ++done;
        std::cout << ": compiled (" << it->compiled->manifest.inputs_size()
                  << " inputs, " << it->compiled->manifest.outputs_size()
                  << " outputs)";
        if (!output.empty() &&
            !writeExecutable(output + ".segment" + std::to_string(s), *it->compiled))
          return 1;
      }
    }
    std::cout << "\n";
  }
  int targets = static_cast<int>(std::count_if(
      segments.begin(), segments.end(),
      [](const kiln::compiler::GraphSegment &segment) { return segment.onTarget; }));
  std::cout << done << " of " << targets << " target segments compiled for "
            << options.target << "\n";
  return done == targets ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  std::string input, output, dumpDir, emitStage;
  bool opReport = false, checkSupport = false, place = false;
  kiln::compiler::PlacementRequest placement;
  kiln::compiler::CompileOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "kiln-compile: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      printUsage();
      return 0;
    } else if (arg == "-o" || arg == "--output") {
      output = value();
    } else if (arg == "--target") {
      options.target = value();
    } else if (arg == "--cpu") {
      options.options.set_cpu(value());
    } else if (arg == "--cpu-features") {
      options.options.set_cpu_features(value());
    } else if (arg == "--kernel-library") {
      options.options.set_kernel_library(value());
    } else if (arg == "--convolution-algorithm") {
      options.options.set_convolution_algorithm(value());
    } else if (arg == "--riscv-vlen") {
      options.options.mutable_riscv()->set_vlen(std::atoi(value().c_str()));
    } else if (arg == "--riscv-scalar-only") {
      options.options.mutable_riscv()->set_scalar_only(true);
    } else if (arg == "--riscv-bare-metal") {
      options.options.mutable_riscv()->set_bare_metal(true);
    } else if (arg == "--acap-host-cpu") {
      options.options.mutable_acap()->set_host_cpu(value());
    } else if (arg == "--acap-array") {
      options.options.mutable_acap()->set_array(value());
    } else if (arg == "--acap-tiles") {
      options.options.mutable_acap()->set_tiles(std::atoi(value().c_str()));
    } else if (arg == "--opt-level") {
      options.options.set_opt_level(std::atoi(value().c_str()));
    } else if (arg == "--emit") {
      emitStage = value();
      options.dumpStages = true;
    } else if (arg == "--op-report") {
      opReport = true;
    } else if (arg == "--check-support") {
      checkSupport = true;
    } else if (arg == "--place") {
      place = true;
    } else if (arg == "--max-fallback-fraction") {
      placement.maxFallbackFraction = std::atof(value().c_str());
    } else if (arg == "--segment-budget-ms") {
      placement.segmentBudget = std::chrono::milliseconds(std::atol(value().c_str()));
    } else if (arg == "--dump") {
      dumpDir = value();
      options.dumpStages = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "kiln-compile: unknown option " << arg << " (see --help)\n";
      return 2;
    } else {
      input = arg;
    }
  }
  if (input.empty() ||
      (output.empty() && emitStage.empty() && !opReport && !checkSupport &&
       !place)) {
    printUsage();
    return 2;
  }
  kiln::v1::Graph graph;
  if (!readGraph(input, graph))
    return 1;
  if (checkSupport)
    return printNodeSupport(graph, options);
  if (place)
    return printPlacementPlan(graph, options, output, placement);
  auto compiled = kiln::compiler::compileGraph(graph, options);
  if (!compiled.ok()) {
    std::cerr << "kiln-compile: " << compiled.status() << "\n";
    return 1;
  }
  if (opReport)
    std::cout << kiln::analysis::formatOpReport(compiled->opReport);
  if (!emitStage.empty()) {
    for (const auto &stage : compiled->stages) {
      if (stage.stage == emitStage) {
        std::cout << stage.text;
        return 0;
      }
    }
    std::cerr << "kiln-compile: unknown stage '" << emitStage
              << "' (aten, linalg, llvm-dialect, llvm-ir, asm)\n";
    return 2;
  }
  if (output.empty())
    return 0; // --op-report alone
  if (!writeExecutable(output, *compiled))
    return 1;
  if (!dumpDir.empty()) {
    std::filesystem::create_directories(dumpDir);
    int index = 0;
    for (const auto &stage : compiled->stages) {
      std::string extension = stage.stage == "llvm-ir" ? ".ll"
                              : stage.stage == "asm"   ? ".s"
                                                       : ".mlir";
      std::ostringstream name;
      name << index++ << "-" << stage.stage << extension;
      if (!writeFile(std::filesystem::path(dumpDir) / name.str(), stage.text))
        return 1;
    }
    if (!writeFile(std::filesystem::path(dumpDir) / "op-report.txt",
                   kiln::analysis::formatOpReport(compiled->opReport)))
      return 1;
  }
  return 0;
}
