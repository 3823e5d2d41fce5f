//===- CycleModel.h - Kiln's throughput model of the MDLA -------*- C++ -*-===//
//
// This file declares estimateCycles(): how many device cycles a run's layers
// take under Kiln's throughput model of the MDLA (docs/devices/mdla.md).
// Each layer costs the larger of its compute time and its memory time, plus
// a fixed setup. The parameters are Kiln's assumptions for an estimate, not
// figures Micron publishes for any card.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/mdla/FixedPointModel.h"

#include <cstdint>
#include <vector>

namespace kiln::agent::mdla {

struct CycleModel {
  /// int16 multiply-accumulates per cycle of the MAC array (Conv, Gemm).
  int64_t macsPerCycle = 1024;
  /// Output-channel lanes the MAC array is split into: a layer with fewer
  /// output channels (or columns) than a multiple of this leaves lanes idle.
  int64_t macLanes = 64;
  /// Element operations per cycle of the vector unit (pooling, batch norm,
  /// elementwise ops).
  int64_t vectorOpsPerCycle = 64;
  /// Bytes per cycle between the device's memory and the array.
  int64_t bytesPerCycle = 32;
  /// Fixed cycles per layer (instruction fetch, DMA setup).
  int64_t layerSetupCycles = 256;
  /// The clock the estimate assumes, for turning cycles into time.
  double clockMhz = 187.5;
};

/// Cycles of one layer; Identity and Reshape cost nothing.
int64_t layerCycles(const LayerWork &work, int64_t outputChannels,
                    const CycleModel &model = {});

/// Cycles of a whole run.
uint64_t estimateCycles(const std::vector<LayerWork> &work,
                        const CycleModel &model = {});

} // namespace kiln::agent::mdla
