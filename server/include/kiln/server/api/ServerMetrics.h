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
  MetricFamily<Counter> &compiles;
  /// Compile request latency in seconds by target (validation to answer).
  MetricFamily<Histogram> &compileSeconds;
  /// Compiles answered with a partition (fallback CPU), and the graph nodes
  /// they placed on the host CPU, by target.
  MetricFamily<Counter> &partitionedCompiles;
  MetricFamily<Counter> &fallbackNodes;
  /// Compile-cache lookups answered from disk / that ran the compiler.
  MetricFamily<Counter> &cacheHits;
  MetricFamily<Counter> &cacheMisses;
  /// Bytes of blobs in the content store.
  MetricFamily<Gauge> &cacheBytes;
  /// Blobs removed from the content store.
  MetricFamily<Counter> &cacheEvictions;
  /// Blob payload bytes received by Blobs.Write / sent by Blobs.Read.
  MetricFamily<Counter> &blobBytesIn;
  MetricFamily<Counter> &blobBytesOut;
  /// Execute tasks waiting for or running on a device, by target.
  MetricFamily<Gauge> &queueDepth;
  /// Time from scheduling to dispatch, in seconds, by target.
  MetricFamily<Histogram> &queueWaitSeconds;
  /// Executions by device and outcome (ok, error).
  MetricFamily<Counter> &executions;
  /// Execute latency in seconds by device.
  MetricFamily<Histogram> &executeSeconds;
  /// Instructions simulated devices counted, by device.
  MetricFamily<Counter> &deviceInstructions;
  /// Agents with an open Agent.Connect stream.
  MetricFamily<Gauge> &agentsConnected;
  /// RPCs being served, by method.
  MetricFamily<Gauge> &requestsInFlight;
};

} // namespace kiln::server
