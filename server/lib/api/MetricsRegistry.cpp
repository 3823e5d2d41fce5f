//===- MetricsRegistry.cpp - counters, gauges, histograms -----------------===//
//
// This file implements the metric types and the Prometheus text rendering.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/MetricsRegistry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <variant>

namespace kiln::server {

void Counter::inc(double amount) {
  if (amount > 0)
    current.fetch_add(amount);
}

void Gauge::inc(double amount) { current.fetch_add(amount); }

Histogram::Histogram(std::vector<double> bounds)
    : bounds(std::move(bounds)), counts(this->bounds.size() + 1, 0) {}

void Histogram::observe(double value) {
  size_t bucket =
      std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin();
  std::lock_guard<std::mutex> lock(mutex);
  ++counts[bucket];
  sum += value;
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot snap;
  snap.bounds = bounds;
  std::lock_guard<std::mutex> lock(mutex);
  uint64_t running = 0;
  for (uint64_t count : counts) {
    running += count;
    snap.cumulative.push_back(running);
  }
  snap.sum = sum;
  snap.count = running;
  return snap;
}

std::vector<double> latencyBucketsSeconds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
          0.5,   1,      2.5,   5,    10,    30,   60};
}

std::string formatMetricValue(double value) {
  if (std::isnan(value))
    return "NaN";
  if (std::isinf(value))
    return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 9.007199254740992e15)
    return absl::StrFormat("%.0f", value);
  for (int precision = 1; precision <= 17; ++precision) {
    std::string text = absl::StrFormat("%.*g", precision, value);
    if (std::strtod(text.c_str(), nullptr) == value)
      return text;
  }
  return absl::StrFormat("%.17g", value);
}

std::string escapeLabelValue(const std::string &value) {
  std::string out;
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string escapeHelp(const std::string &help) {
  std::string out;
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

namespace {

/// `{a="x",b="y"}` plus an optional extra label (a histogram's `le`).
std::string labelText(const std::vector<std::string> &names,
                      const std::vector<std::string> &values,
                      const std::string &extraName = "",
                      const std::string &extraValue = "") {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i)
    absl::StrAppend(&text, text.empty() ? "" : ",", names[i], "=\"",
                    escapeLabelValue(values[i]), "\"");
  if (!extraName.empty())
    absl::StrAppend(&text, text.empty() ? "" : ",", extraName, "=\"",
                    extraValue, "\"");
  return text.empty() ? text : absl::StrCat("{", text, "}");
}

} // namespace

struct MetricsRegistry::Entry {
  std::string name;
  std::string help;
  std::variant<std::unique_ptr<MetricFamily<Counter>>,
               std::unique_ptr<MetricFamily<Gauge>>,
               std::unique_ptr<MetricFamily<Histogram>>>
      family;
};

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

MetricFamily<Counter> &
MetricsRegistry::counter(const std::string &name, const std::string &help,
                         std::vector<std::string> labelNames) {
  auto family = std::make_unique<MetricFamily<Counter>>(
      std::move(labelNames), [] { return std::make_unique<Counter>(); });
  MetricFamily<Counter> &ref = *family;
  std::lock_guard<std::mutex> lock(mutex);
  entries.push_back(
      std::make_unique<Entry>(Entry{name, help, std::move(family)}));
  return ref;
}

MetricFamily<Gauge> &MetricsRegistry::gauge(const std::string &name,
                                            const std::string &help,
                                            std::vector<std::string> labelNames) {
  auto family = std::make_unique<MetricFamily<Gauge>>(
      std::move(labelNames), [] { return std::make_unique<Gauge>(); });
  MetricFamily<Gauge> &ref = *family;
  std::lock_guard<std::mutex> lock(mutex);
  entries.push_back(
      std::make_unique<Entry>(Entry{name, help, std::move(family)}));
  return ref;
}

MetricFamily<Histogram> &
MetricsRegistry::histogram(const std::string &name, const std::string &help,
                           std::vector<std::string> labelNames,
                           std::vector<double> bounds) {
  auto family = std::make_unique<MetricFamily<Histogram>>(
      std::move(labelNames),
      [bounds] { return std::make_unique<Histogram>(bounds); });
  MetricFamily<Histogram> &ref = *family;
  std::lock_guard<std::mutex> lock(mutex);
  entries.push_back(
      std::make_unique<Entry>(Entry{name, help, std::move(family)}));
  return ref;
}

void MetricsRegistry::addCollector(std::function<void()> collect) {
  std::lock_guard<std::mutex> lock(mutex);
  collectors.push_back(std::move(collect));
}

std::string MetricsRegistry::render() const {
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto &collect : collectors)
    collect();
  std::string out;
  for (const auto &entry : entries) {
    const std::string &name = entry->name;
    absl::StrAppend(&out, "# HELP ", name, " ", escapeHelp(entry->help), "\n");
    if (auto *counters =
            std::get_if<std::unique_ptr<MetricFamily<Counter>>>(&entry->family)) {
      absl::StrAppend(&out, "# TYPE ", name, " counter\n");
      (*counters)->forEach([&](const auto &values, const Counter &c) {
        absl::StrAppend(&out, name, labelText((*counters)->labelNames, values),
                        " ", formatMetricValue(c.value()), "\n");
      });
    } else if (auto *gauges = std::get_if<std::unique_ptr<MetricFamily<Gauge>>>(
                   &entry->family)) {
      absl::StrAppend(&out, "# TYPE ", name, " gauge\n");
      (*gauges)->forEach([&](const auto &values, const Gauge &g) {
        absl::StrAppend(&out, name, labelText((*gauges)->labelNames, values),
                        " ", formatMetricValue(g.value()), "\n");
      });
    } else {
      auto &histograms =
          std::get<std::unique_ptr<MetricFamily<Histogram>>>(entry->family);
      absl::StrAppend(&out, "# TYPE ", name, " histogram\n");
      const std::vector<std::string> &names = histograms->labelNames;
      histograms->forEach([&](const auto &values, const Histogram &h) {
        Histogram::Snapshot snap = h.snapshot();
        for (size_t i = 0; i <= snap.bounds.size(); ++i) {
          std::string le = i < snap.bounds.size()
                               ? formatMetricValue(snap.bounds[i])
                               : std::string("+Inf");
          absl::StrAppend(&out, name, "_bucket",
                          labelText(names, values, "le", le), " ",
                          snap.cumulative[i], "\n");
        }
        absl::StrAppend(&out, name, "_sum", labelText(names, values), " ",
                        formatMetricValue(snap.sum), "\n");
        absl::StrAppend(&out, name, "_count", labelText(names, values), " ",
                        snap.count, "\n");
      });
    }
  }
  return out;
}

} // namespace kiln::server
