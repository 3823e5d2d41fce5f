//===- ServerMetrics.h - the metrics kilnd exports --------------*- C++ -*-===//
//
// This file declares ServerMetrics: kilnd's registry and every kiln_* metric
// family in it, so services record into named members rather than looking
// metrics up by string.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/api/MetricsRegistry.h"

namespace kiln::server {

/// kilnd's metrics. The services record into these; values read from other
/// components (cache sizes, agents) are filled by collectors at scrape time.
struct ServerMetrics {
  ServerMetrics();

  MetricsRegistry registry;

  /// Compile requests by target and outcome (hit, miss, error).
  CounterFamily &compiles;
  /// Compile request latency in seconds by target (validation to answer).
  HistogramFamily &compileSeconds;
  /// Compiles answered with a partition (fallback CPU), and the graph nodes
  /// they placed on the host CPU, by target.
  CounterFamily &partitionedCompiles;
  CounterFamily &fallbackNodes;
  /// Compile-cache lookups answered from disk / that ran the compiler.
  CounterFamily &cacheHits;
  CounterFamily &cacheMisses;
  /// Bytes of blobs in the content store.
  GaugeFamily &cacheBytes;
  /// Blobs removed from the content store.
  CounterFamily &cacheEvictions;
  /// In-transit blobs held in memory (bytes), spent ones dropped (outputs
  /// their clients read, inputs their Executes ran with), and unused ones
  /// spilled to disk for room.
  GaugeFamily &transitBytes;
  CounterFamily &transitDropped;
  CounterFamily &transitSpilled;
  /// Blob payload bytes received by Blobs.Write / sent by Blobs.Read.
  CounterFamily &blobBytesIn;
  CounterFamily &blobBytesOut;
  /// Execute tasks waiting for or running on a device, by target.
  GaugeFamily &queueDepth;
  /// Time from scheduling to dispatch, in seconds, by target.
  HistogramFamily &queueWaitSeconds;
  /// Executions by device and outcome (ok, error).
  CounterFamily &executions;
  /// Execute latency in seconds by device.
  HistogramFamily &executeSeconds;
  /// Instructions simulated devices counted, by device.
  CounterFamily &deviceInstructions;
  /// Direct channels agents opened for local clients, by device (calls on
  /// them do not pass kilnd and are not in `executions`).
  CounterFamily &directChannels;
  /// Agents with an open Agent.Connect stream.
  GaugeFamily &remoteUp;
  CounterFamily &remoteRequests;
  CounterFamily &remoteBytes;
  CounterFamily &remoteCorrupt;
  GaugeFamily &agentsConnected;
  /// RPCs being served, by method.
  GaugeFamily &requestsInFlight;
};

} // namespace kiln::server
