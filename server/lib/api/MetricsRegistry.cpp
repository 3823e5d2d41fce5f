//===- MetricsRegistry.cpp - kilnd's metrics on prometheus-cpp ------------===//
//
// This file implements MetricsRegistry over prometheus-cpp's registry and
// text serializer, and the process_* metrics from /proc/self.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/MetricsRegistry.h"

#include <prometheus/text_serializer.h>

#include "absl/strings/numbers.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

namespace kiln::server {

std::vector<double> latencyBucketsSeconds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
          0.5,   1,      2.5,   5,    10,    30,   60};
}

namespace {

/// HELP text as the exposition format needs it (backslash and newline
/// escaped): prometheus-cpp 1.0.1's TextSerializer writes HELP verbatim
/// (it escapes label values only), so a newline would end the line early.
std::string escapedHelp(const std::string &help) {
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

} // namespace

MetricsRegistry::MetricsRegistry()
    : registry(std::make_shared<prometheus::Registry>()) {}

MetricsRegistry::~MetricsRegistry() = default;

CounterFamily &MetricsRegistry::counter(const std::string &name,
                                        const std::string &help,
                                        std::vector<std::string> labelNames) {
  auto &family =
      prometheus::BuildCounter().Name(name).Help(escapedHelp(help)).Register(*registry);
  std::lock_guard<std::mutex> lock(mutex);
  counters.push_back(std::make_unique<CounterFamily>(
      family, std::move(labelNames),
      [](prometheus::Family<prometheus::Counter> &f,
         const prometheus::Labels &labels) -> prometheus::Counter & {
        return f.Add(labels);
      }));
  return *counters.back();
}

GaugeFamily &MetricsRegistry::gauge(const std::string &name,
                                    const std::string &help,
                                    std::vector<std::string> labelNames) {
  auto &family =
      prometheus::BuildGauge().Name(name).Help(escapedHelp(help)).Register(*registry);
  std::lock_guard<std::mutex> lock(mutex);
  gauges.push_back(std::make_unique<GaugeFamily>(
      family, std::move(labelNames),
      [](prometheus::Family<prometheus::Gauge> &f,
         const prometheus::Labels &labels) -> prometheus::Gauge & {
        return f.Add(labels);
      }));
  return *gauges.back();
}

HistogramFamily &MetricsRegistry::histogram(const std::string &name,
                                            const std::string &help,
                                            std::vector<std::string> labelNames,
                                            std::vector<double> bounds) {
  auto &family =
      prometheus::BuildHistogram().Name(name).Help(escapedHelp(help)).Register(*registry);
  std::lock_guard<std::mutex> lock(mutex);
  histograms.push_back(std::make_unique<HistogramFamily>(
      family, std::move(labelNames),
      [bounds = std::move(bounds)](prometheus::Family<prometheus::Histogram> &f,
                                   const prometheus::Labels &labels)
          -> prometheus::Histogram & { return f.Add(labels, bounds); }));
  return *histograms.back();
}

void MetricsRegistry::addCollector(std::function<void()> collect) {
  std::lock_guard<std::mutex> lock(mutex);
  collectors.push_back(std::move(collect));
}

namespace {

/// Fields of /proc/self/stat after the command name: utime (14), stime
/// (15), starttime (22), vsize (23) and rss (24), numbered as in proc(5).
struct ProcStat {
  double cpuSeconds = 0;
  double startTimeSeconds = 0;
  double virtualBytes = 0;
  double residentBytes = 0;
};

ProcStat readProcStat() {
  ProcStat stat;
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  size_t close = text.rfind(')'); // the command name may hold spaces
  if (close == std::string::npos)
    return stat;
  std::istringstream fields(text.substr(close + 2));
  std::vector<std::string> f{"", "", ""}; // fields 1-2 and a pad: f[3] is field 3
  for (std::string field; fields >> field;)
    f.push_back(field);
  if (f.size() <= 24)
    return stat;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  // Parsed without exceptions: a field that does not parse leaves the
  // sample at 0 rather than ending kilnd in the middle of a scrape.
  double utime = 0, stime = 0, start = 0, vsize = 0, rss = 0, boot = 0;
  if (!absl::SimpleAtod(f[14], &utime) || !absl::SimpleAtod(f[15], &stime) ||
      !absl::SimpleAtod(f[22], &start) || !absl::SimpleAtod(f[23], &vsize) ||
      !absl::SimpleAtod(f[24], &rss))
    return stat;
  stat.cpuSeconds = (utime + stime) / ticks;
  stat.virtualBytes = vsize;
  stat.residentBytes = rss * page;
  // starttime is in ticks since boot; boot time is /proc/stat's btime.
  std::ifstream procStat("/proc/stat");
  for (std::string line; std::getline(procStat, line);)
    if (line.rfind("btime ", 0) == 0 && absl::SimpleAtod(line.substr(6), &boot))
      stat.startTimeSeconds = boot + start / ticks;
  return stat;
}

double openFileDescriptors() {
  std::error_code error;
  double count = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error))
    ++count;
  return count;
}

} // namespace

void MetricsRegistry::addBuildAndProcessMetrics(const std::string &version,
                                                const std::string &compilerBuildId) {
  gauge("kiln_build_info",
        "1, labelled with the running kilnd's version and compiler build id.",
        {"version", "compiler_build_id"})
      .labels({version, compilerBuildId})
      .set(1);
  Counter &cpu = counter("process_cpu_seconds_total",
                         "Total user and system CPU time spent in seconds.")
                     .labels();
  Gauge &resident = gauge("process_resident_memory_bytes",
                          "Resident memory size in bytes.")
                        .labels();
  Gauge &virtualMemory = gauge("process_virtual_memory_bytes",
                               "Virtual memory size in bytes.")
                             .labels();
  Gauge &openFds =
      gauge("process_open_fds", "Number of open file descriptors.").labels();
  Gauge &maxFds =
      gauge("process_max_fds", "Maximum number of open file descriptors.")
          .labels();
  Gauge &start = gauge("process_start_time_seconds",
                       "Start time of the process since unix epoch in seconds.")
                     .labels();
  addCollector([&cpu, &resident, &virtualMemory, &openFds, &maxFds, &start] {
    ProcStat stat = readProcStat();
    cpu.inc(stat.cpuSeconds - cpu.value());
    resident.set(stat.residentBytes);
    virtualMemory.set(stat.virtualBytes);
    start.set(stat.startTimeSeconds);
    openFds.set(openFileDescriptors());
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0)
      maxFds.set(static_cast<double>(limit.rlim_cur));
  });
}

std::string MetricsRegistry::render() const {
  std::lock_guard<std::mutex> rendering(renderMutex);
  std::vector<std::function<void()>> run;
  {
    std::lock_guard<std::mutex> lock(mutex);
    run = collectors;
  }
  for (const std::function<void()> &collect : run)
    collect();
  return prometheus::TextSerializer().Serialize(registry->Collect());
}

} // namespace kiln::server
