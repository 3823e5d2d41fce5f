//===- CycleModel.cpp - Kiln's throughput model of the MDLA ---------------===//
//
// This file implements the cycle estimate: per layer, max(compute, memory)
// plus setup, summed over the run.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/mdla/CycleModel.h"

#include <algorithm>

namespace kiln::agent::mdla {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace

int64_t layerCycles(const LayerWork &work, int64_t outputChannels,
                    const CycleModel &model) {
  if (work.macs == 0 && work.vectorOps == 0 && work.activationBytes == 0)
    return 0;  // a folded batch norm, a reshape
  int64_t compute = 0;
  if (work.macs > 0) {
    // Idle lanes: the MACs as if the channels filled whole lane groups.
    int64_t macs = work.macs;
    if (outputChannels > 0)
      macs = work.macs / outputChannels *
             (ceilDiv(outputChannels, model.macLanes) * model.macLanes);
    compute = ceilDiv(macs, model.macsPerCycle);
  }
  compute += ceilDiv(work.vectorOps, model.vectorOpsPerCycle);
  int64_t memory = ceilDiv(work.activationBytes + work.weightBytes, model.bytesPerCycle);
  return std::max(compute, memory) + model.layerSetupCycles;
}

uint64_t estimateCycles(const std::vector<LayerWork> &work, const CycleModel &model) {
  uint64_t total = 0;
  for (const LayerWork &layer : work)
    total += static_cast<uint64_t>(layerCycles(layer, layer.outputChannels, model));
  return total;
}

} // namespace kiln::agent::mdla
