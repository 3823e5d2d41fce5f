//===- ServerMetrics.cpp - the metrics kilnd exports ----------------------===//
//
// This file implements ServerMetrics: the names, help texts, labels and
// buckets of kilnd's kiln_* metrics.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/ServerMetrics.h"

namespace kiln::server {

ServerMetrics::ServerMetrics()
    : compiles(registry.counter(
          "kiln_compiles_total",
          "Compile requests by target and outcome (hit, miss, error).",
          {"target", "outcome"})),
      compileSeconds(registry.histogram(
          "kiln_compile_duration_seconds",
          "Compile request latency, validation to answer, by target.",
          {"target"}, latencyBucketsSeconds())),
      partitionedCompiles(registry.counter(
          "kiln_partitioned_compiles_total",
          "Compiles answered with target and CPU segments (placement fallback "
          "CPU), by target.",
          {"target"})),
      fallbackNodes(registry.counter(
          "kiln_fallback_nodes_total",
          "Graph nodes placed on the host CPU because the target lacks them, "
          "by target.",
          {"target"})),
      cacheHits(registry.counter(
          "kiln_cache_hits_total",
          "Compile-cache lookups answered from disk (no compile).")),
      cacheMisses(registry.counter(
          "kiln_cache_misses_total",
          "Compile-cache lookups that ran the compiler.")),
      cacheBytes(registry.gauge("kiln_cache_bytes",
                                "Bytes of blobs in the content store.")),
      cacheEvictions(registry.counter(
          "kiln_cache_evictions_total",
          "Blobs removed from the content store (evicted or found corrupt).")),
      transitBytes(registry.gauge(
          "kiln_transit_blob_bytes",
          "Bytes of in-transit blobs (Execute inputs and outputs) held in "
          "memory.")),
      transitDropped(registry.counter(
          "kiln_transit_blobs_dropped_total",
          "In-transit blobs dropped from memory, not written anywhere: "
          "Execute outputs once every client they were handed to had read "
          "them in full (at once, or later to make room), and inputs an "
          "Execute has run with (to make room).")),
      transitSpilled(registry.counter(
          "kiln_transit_blobs_spilled_total",
          "In-transit blobs not used yet (outputs not read, inputs not "
          "run), written to the disk store to make room in memory.")),
      blobBytesIn(registry.counter("kiln_blob_bytes_in_total",
                                   "Blob bytes received by Blobs.Write.")),
      blobBytesOut(registry.counter("kiln_blob_bytes_out_total",
                                    "Blob bytes sent by Blobs.Read.")),
      queueDepth(registry.gauge(
          "kiln_queue_depth",
          "Execute tasks waiting for or running on a device, by target.",
          {"target"})),
      queueWaitSeconds(registry.histogram(
          "kiln_queue_wait_seconds",
          "Time an Execute task waited for a device, by target.", {"target"},
          latencyBucketsSeconds())),
      executions(registry.counter(
          "kiln_executions_total",
          "Executions by device and outcome (ok, error).",
          {"device", "outcome"})),
      executeSeconds(registry.histogram(
          "kiln_execute_duration_seconds",
          "Execute request latency by device.", {"device"},
          latencyBucketsSeconds())),
      deviceInstructions(registry.counter(
          "kiln_device_instructions_total",
          "Guest instructions simulated devices retired running executables.",
          {"device"})),
      directChannels(registry.counter(
          "kiln_direct_channels_total",
          "Direct channels to a device's agent handed to local clients; "
          "their calls do not pass kilnd (kiln_executions_total counts the "
          "call that opened each).",
          {"device"})),
      remoteUp(registry.gauge(
          "kiln_remote_cache_up",
          "1 while the shared cache tier (--remote-cache) answers, 0 while "
          "kilnd serves from the local tier only and retries with backoff.")),
      remoteRequests(registry.counter(
          "kiln_remote_cache_lookups_total",
          "Remote action-cache lookups by outcome (hit, miss) and remote "
          "calls that failed (error).",
          {"outcome"})),
      remoteBytes(registry.counter(
          "kiln_remote_cache_bytes_total",
          "Blob bytes moved to and from the shared tier, by direction (read, "
          "written).",
          {"direction"})),
      remoteCorrupt(registry.counter(
          "kiln_remote_cache_corrupt_total",
          "Remote entries or blobs found unusable (digest mismatch, foreign "
          "compiler, unparsable record); each was compiled locally instead.")),
      agentsConnected(registry.gauge(
          "kiln_agents_connected",
          "Agents with an open Agent.Connect stream.")),
      requestsInFlight(registry.gauge("kiln_requests_in_flight",
                                      "RPCs being served, by method.",
                                      {"method"})) {}

} // namespace kiln::server
