//===- MetricsRegistry.h - kilnd's metrics on prometheus-cpp ----*- C++ -*-===//
//
// This file declares MetricsRegistry: labelled counter, gauge and histogram
// families kept in a prometheus-cpp registry (Debian's prometheus-cpp-dev),
// scrape-time collectors, kiln_build_info and the process_* metrics, and the
// text exposition (prometheus-cpp's TextSerializer) that /metrics serves.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::server {

/// A value that only goes up (a prometheus::Counter). Thread-safe.
class Counter {
public:
  explicit Counter(prometheus::Counter &metric) : metric(metric) {}
  /// Adds `amount`; negative amounts are ignored (counters never go down).
  void inc(double amount = 1) {
    if (amount > 0)
      metric.Increment(amount);
  }
  double value() const { return metric.Value(); }

private:
  prometheus::Counter &metric;
};

/// A value that goes up and down (a prometheus::Gauge). Thread-safe.
class Gauge {
public:
  explicit Gauge(prometheus::Gauge &metric) : metric(metric) {}
  void set(double value) { metric.Set(value); }
  void inc(double amount = 1) { metric.Increment(amount); }
  void dec(double amount = 1) { metric.Decrement(amount); }
  double value() const { return metric.Value(); }

private:
  prometheus::Gauge &metric;
};

/// Observations counted into buckets (a prometheus::Histogram). Thread-safe.
class Histogram {
public:
  explicit Histogram(prometheus::Histogram &metric) : metric(metric) {}
  void observe(double value) { metric.Observe(value); }

private:
  prometheus::Histogram &metric;
};

/// Default latency buckets in seconds: 1 ms .. 60 s.
std::vector<double> latencyBucketsSeconds();

/// Every series of one metric name, keyed by label values. Thread-safe;
/// references returned by labels() stay valid for the family's lifetime.
template <typename Metric, typename Prometheus> class MetricFamily {
public:
  using Make = std::function<Prometheus &(prometheus::Family<Prometheus> &,
                                          const prometheus::Labels &)>;
  MetricFamily(prometheus::Family<Prometheus> &family,
               std::vector<std::string> labelNames, Make make)
      : labelNames(std::move(labelNames)), family(family), make(std::move(make)) {}

  /// The series for `values`, one per label name, created on first use.
  /// Missing values are empty strings; extra ones are dropped.
  Metric &labels(std::vector<std::string> values = {}) {
    values.resize(labelNames.size());
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<Metric> &slot = series[values];
    if (!slot) {
      prometheus::Labels labels;
      for (size_t i = 0; i < labelNames.size(); ++i)
        labels.emplace(labelNames[i], values[i]);
      slot = std::make_unique<Metric>(make(family, labels));
    }
    return *slot;
  }

  const std::vector<std::string> labelNames;

private:
  prometheus::Family<Prometheus> &family;
  Make make;
  std::mutex mutex;
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> series;
};

using CounterFamily = MetricFamily<Counter, prometheus::Counter>;
using GaugeFamily = MetricFamily<Gauge, prometheus::Gauge>;
using HistogramFamily = MetricFamily<Histogram, prometheus::Histogram>;

/// Owns metric families and renders them. Thread-safe.
class MetricsRegistry {
public:
  MetricsRegistry();
  ~MetricsRegistry();

  CounterFamily &counter(const std::string &name, const std::string &help,
                         std::vector<std::string> labelNames = {});
  GaugeFamily &gauge(const std::string &name, const std::string &help,
                     std::vector<std::string> labelNames = {});
  HistogramFamily &histogram(const std::string &name, const std::string &help,
                             std::vector<std::string> labelNames,
                             std::vector<double> bounds);

  /// Runs before every render(); sets gauges read from elsewhere (sizes,
  /// connection counts) at scrape time.
  void addCollector(std::function<void()> collect);

  /// kiln_build_info{version, compiler_build_id} 1, and the process_*
  /// metrics (CPU seconds, resident and virtual memory, open and maximum
  /// file descriptors, start time), read from /proc at every scrape.
  void addBuildAndProcessMetrics(const std::string &version,
                                 const std::string &compilerBuildId);

  /// The text exposition format (prometheus-cpp's TextSerializer).
  std::string render() const;

  /// The prometheus-cpp registry underneath.
  const std::shared_ptr<prometheus::Registry> &prometheusRegistry() const {
    return registry;
  }

private:
  std::shared_ptr<prometheus::Registry> registry;
  mutable std::mutex mutex;
  /// One render at a time: collectors add what their sources grew since the
  /// last scrape, which two concurrent scrapes would both add.
  mutable std::mutex renderMutex;
  std::vector<std::unique_ptr<CounterFamily>> counters;
  std::vector<std::unique_ptr<GaugeFamily>> gauges;
  std::vector<std::unique_ptr<HistogramFamily>> histograms;
  std::vector<std::function<void()>> collectors;
};

} // namespace kiln::server
