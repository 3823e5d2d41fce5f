//===- MetricsRegistry.h - counters, gauges, histograms ---------*- C++ -*-===//
//
// This file declares kilnd's small in-tree metrics registry (prometheus-cpp
// is not packaged): labelled counter, gauge and histogram families rendered
// in the Prometheus text exposition format, version 0.0.4.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::server {

/// A value that only goes up. Thread-safe.
class Counter {
public:
  /// Adds `amount`; negative amounts are ignored (counters never go down).
  void inc(double amount = 1);
  double value() const { return current.load(); }

private:
  std::atomic<double> current{0};
};

/// A value that goes up and down. Thread-safe.
class Gauge {
public:
  void set(double value) { current.store(value); }
  void inc(double amount = 1);
  void dec(double amount = 1) { inc(-amount); }
  double value() const { return current.load(); }

private:
  std::atomic<double> current{0};
};

/// Observations counted into buckets with upper bounds, plus their sum.
/// Thread-safe.
class Histogram {
public:
  /// `bounds` must be increasing; +Inf is implied.
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);

  struct Snapshot {
    std::vector<double> bounds;
    /// Cumulative counts per bound, then the +Inf bucket (== count).
    std::vector<uint64_t> cumulative;
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot snapshot() const;

private:
  const std::vector<double> bounds;
  mutable std::mutex mutex;
  std::vector<uint64_t> counts; // per bucket, +Inf last; not cumulative
  double sum = 0;
};

/// Default latency buckets in seconds: 1 ms .. 60 s.
std::vector<double> latencyBucketsSeconds();

/// Every series of one metric name, keyed by label values. Thread-safe;
/// references returned by labels() stay valid for the family's lifetime.
template <typename Metric> class MetricFamily {
public:
  MetricFamily(std::vector<std::string> labelNames,
               std::function<std::unique_ptr<Metric>()> make)
      : labelNames(std::move(labelNames)), make(std::move(make)) {}

  /// The series for `values`, one per label name, created on first use.
  /// Missing values are empty strings; extra ones are dropped.
  Metric &labels(std::vector<std::string> values = {}) {
    values.resize(labelNames.size());
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<Metric> &slot = series[values];
    if (!slot)
      slot = make();
    return *slot;
  }

  /// Calls `visit(labelValues, metric)` for every series, in label order.
  void forEach(const std::function<void(const std::vector<std::string> &,
                                        const Metric &)> &visit) const {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto &[values, metric] : series)
      visit(values, *metric);
  }

  const std::vector<std::string> labelNames;

private:
  std::function<std::unique_ptr<Metric>()> make;
  mutable std::mutex mutex;
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> series;
};

/// Owns metric families and renders them. Thread-safe. Families render in
/// the order they were added; series within a family by label values.
class MetricsRegistry {
public:
  MetricsRegistry();
  ~MetricsRegistry();

  MetricFamily<Counter> &counter(const std::string &name,
                                 const std::string &help,
                                 std::vector<std::string> labelNames = {});
  MetricFamily<Gauge> &gauge(const std::string &name, const std::string &help,
                             std::vector<std::string> labelNames = {});
  MetricFamily<Histogram> &
  histogram(const std::string &name, const std::string &help,
            std::vector<std::string> labelNames, std::vector<double> bounds);

  /// Runs before every render(); sets gauges read from elsewhere (sizes,
  /// connection counts) at scrape time.
  void addCollector(std::function<void()> collect);

  /// The text exposition format: HELP and TYPE lines, then the samples.
  std::string render() const;

private:
  struct Entry;
  mutable std::mutex mutex;
  std::vector<std::unique_ptr<Entry>> entries;
  std::vector<std::function<void()>> collectors;
};

/// A sample value as the text format writes it: integers without a
/// fraction, "+Inf", "-Inf", "NaN", otherwise the shortest round-trip form.
std::string formatMetricValue(double value);

/// Escapes a label value (backslash, double quote, newline).
std::string escapeLabelValue(const std::string &value);

/// Escapes HELP text (backslash, newline).
std::string escapeHelp(const std::string &help);

} // namespace kiln::server
