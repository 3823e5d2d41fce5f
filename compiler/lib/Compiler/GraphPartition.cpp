//===- GraphPartition.cpp - split a graph into target and CPU runs --------===//
//
// This file implements partitionGraph(): a placement-aware topological order
// (Kahn's algorithm with one ready queue per placement), then each segment's
// boundary values and, for target segments, the sub-graph to compile.
//
//===----------------------------------------------------------------------===//
#include "kiln/Compiler/GraphPartition.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace kiln::compiler {
namespace {

using MinQueue = std::priority_queue<int, std::vector<int>, std::greater<int>>;

/// Names of the tensor values node `node` reads, each once.
std::vector<std::string> readValues(const v1::Node &node) {
  std::vector<std::string> names;
  for (const v1::Argument &arg : node.arguments())
    if (arg.kind_case() == v1::Argument::kValue &&
        std::find(names.begin(), names.end(), arg.value()) == names.end())
      names.push_back(arg.value());
  return names;
}

/// Node indices grouped into runs of one placement, in a topological order.
std::vector<std::vector<int>> orderIntoRuns(const v1::Graph &graph,
                                            const std::vector<bool> &onTarget) {
  int count = graph.nodes_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < count; ++i)
    for (const v1::Value &output : graph.nodes(i).outputs())
      producer[output.name()] = i;
  std::vector<int> pending(count, 0);
  std::vector<std::vector<int>> users(count);
  for (int i = 0; i < count; ++i) {
    std::set<int> producers;
    for (const std::string &name : readValues(graph.nodes(i))) {
      auto it = producer.find(name);
      if (it != producer.end() && it->second != i)
        producers.insert(it->second);
    }
    pending[i] = static_cast<int>(producers.size());
    for (int p : producers)
      users[p].push_back(i);
  }
  MinQueue ready[2]; // [0]: CPU, [1]: target
  for (int i = 0; i < count; ++i)
    if (pending[i] == 0)
      ready[onTarget[i]].push(i);
  std::vector<std::vector<int>> runs;
  int current = -1;
  while (!ready[0].empty() || !ready[1].empty()) {
    if (current < 0 || ready[current].empty()) {
      // Switch placement, or start with whichever the lowest ready node has.
      if (current >= 0)
        current = 1 - current;
      else
        current = ready[0].empty() ||
                  (!ready[1].empty() && ready[1].top() < ready[0].top());
      runs.emplace_back();
    }
    int node = ready[current].top();
    ready[current].pop();
    runs.back().push_back(node);
    for (int user : users[node])
      if (--pending[user] == 0)
        ready[onTarget[user]].push(user);
  }
  return runs;
}

v1::Graph targetSubgraph(const v1::Graph &graph, const GraphSegment &segment,
                         int index) {
  v1::Graph sub;
  sub.set_name(absl::StrCat(graph.name(), ".segment", index));
  std::unordered_set<std::string> reads(segment.inputs.begin(),
                                        segment.inputs.end());
  std::unordered_set<std::string> parameters;
  for (const v1::Parameter &param : graph.parameters())
    if (reads.count(param.value().name())) {
      *sub.add_parameters() = param;
      parameters.insert(param.value().name());
    }
  std::unordered_map<std::string, const v1::Value *> values;
  for (const v1::Value &input : graph.inputs())
    values[input.name()] = &input;
  for (const v1::Node &node : graph.nodes())
    for (const v1::Value &output : node.outputs())
      values[output.name()] = &output;
  for (const std::string &name : segment.inputs)
    if (!parameters.count(name))
      *sub.add_inputs() = *values.at(name);
  for (int node : segment.nodes)
    *sub.add_nodes() = graph.nodes(node);
  for (const std::string &name : segment.outputs)
    sub.add_outputs(name);
  return sub;
}

} // namespace

std::vector<GraphSegment> partitionGraph(const v1::Graph &graph,
                                         const std::vector<bool> &onTarget) {
  std::vector<std::vector<int>> runs = orderIntoRuns(graph, onTarget);
  // Where each value is read from: the run of each reader, and the end.
  int afterLast = static_cast<int>(runs.size());
  std::unordered_map<std::string, int> lastReader;
  for (int r = 0; r < afterLast; ++r)
    for (int node : runs[r])
      for (const std::string &name : readValues(graph.nodes(node)))
        lastReader[name] = std::max(lastReader[name], r);
  for (const std::string &name : graph.outputs())
    lastReader[name] = afterLast;

  std::vector<GraphSegment> segments;
  for (int r = 0; r < afterLast; ++r) {
    GraphSegment segment;
    segment.onTarget = onTarget[runs[r].front()];
    segment.nodes = runs[r];
    std::set<std::string> defined, inputs;
    for (int node : runs[r]) {
      for (const std::string &name : readValues(graph.nodes(node)))
        if (!defined.count(name))
          inputs.insert(name);
      for (const v1::Value &output : graph.nodes(node).outputs()) {
        defined.insert(output.name());
        auto reader = lastReader.find(output.name());
        if (reader != lastReader.end() && reader->second > r)
          segment.outputs.push_back(output.name());
      }
    }
    if (segment.outputs.empty())
      continue; // dead code: nothing reads what it computes
    segment.inputs.assign(inputs.begin(), inputs.end());
    if (segment.onTarget)
      segment.graph = targetSubgraph(graph, segment,
                                     static_cast<int>(segments.size()));
    segments.push_back(std::move(segment));
  }
  return segments;
}

} // namespace kiln::compiler
