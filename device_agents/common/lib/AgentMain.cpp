//===- AgentMain.cpp - the main() every agent binary shares ---------------===//
//
// This file implements agent flag parsing, logging setup, SIGTERM/SIGINT
// handling and the agent process's top level.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/AgentMain.h"
#include "kiln/agent/AgentSessionSet.h"

#include "kiln/common/AtomicFile.h"
#include "kiln/common/ByteSize.h"
#include "kiln/common/Credentials.h"

#include "kiln/common/Logging.h"
#include "kiln/common/Settings.h"
#include "kiln/common/Status.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <atomic>
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <thread>
#include <unistd.h>

namespace kiln::agent {
namespace {

std::string hostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0')
    return "localhost";
  return name;
}

std::string defaultAgentId(absl::string_view kind) {
  return absl::StrCat(kind, "-", hostName(), "-", ::getpid());
}

/// CPUs this process may run on (its affinity mask: taskset, cpusets).
int availableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

constexpr const char *kEnvPrefix = "KILN_AGENT_";

/// The common flags' values as given, before the checks that relate them.
struct CommonFlags {
  std::string daemon;
  std::string daemonService;
  int64_t daemonServiceRefreshS = 10;
  std::string tlsServerName;
  std::string cacheDir;
  std::string agentId;
  int64_t residentBytes = int64_t{4} << 30;
  int64_t heldTensorBytes = TaskRunner::kDefaultHeldBytes;
  int64_t outputSpareBytes = SharedBufferSpares::kDefaultBudgetBytes;
  std::string taskThreads = "auto";
  std::string taskVerifyKey;
  std::string tlsCa;
  std::string tlsCert;
  std::string tlsKey;
  std::string token;
  int64_t maxLoadedExecutables = 256;
  std::string directPollUs = "auto";
  std::string localLinkFd;
  std::string logLevel = "info";
  std::string logFormat = "text";
  bool help = false;
};

/// Every agent's flags and then the backend's, bound to `common` and the
/// backend's strings, in --help order. Variables are KILN_AGENT_<FLAG> (not
/// KILN_<FLAG>: those are kilnd's, and local agents inherit its environment).
std::unique_ptr<Settings> declareFlags(std::string_view program,
                                       std::string_view kind,
                                       const std::vector<AgentFlag> &extraFlags,
                                       CommonFlags &common) {
  auto settings = std::make_unique<Settings>(
      std::string(program),
      absl::StrCat("usage: ", std::string(program),
                   " --daemon HOST:PORT[,HOST:PORT...] [flags]\n\nRuns ",
                   std::string(kind),
                   " executables for Kiln daemons (kilnd). Flags "
                   "override the environment variables named below."),
      kEnvPrefix, /*fileKeys=*/false);
  settings->text("daemon", common.daemon,
                 "host:port of kilnd (required); a comma list serves several "
                 "kilnd replicas at once, each over its own connection, with "
                 "one blob cache and one set of resident parameters");
  settings->text("daemon-service", common.daemonService,
                 "NAME:PORT of a headless Service (instead of --daemon): "
                 "serve every address NAME resolves to, each a kilnd "
                 "replica, re-resolved every --daemon-service-refresh-s so "
                 "that replicas that come and go are joined and left");
  settings->integer("daemon-service-refresh-s", common.daemonServiceRefreshS, 1,
                    "seconds between resolutions of --daemon-service");
  settings->text("cache-dir", common.cacheDir, "local blob cache directory");
  settings->text("agent-id", common.agentId,
                 "id this agent registers under (with --tls-cert: the "
                 "certificate's CN)");
  settings->byteSize("resident-bytes", common.residentBytes,
                     "memory budget for resident parameters (K/M/G/KiB/MiB/"
                     "GiB)");
  settings->byteSize("held-tensor-bytes", common.heldTensorBytes,
                     "memory budget, per daemon, for the outputs callers ask "
                     "the devices to keep between calls (ExecuteRequest."
                     "keep_outputs); past it such calls are RESOURCE_EXHAUSTED");
  settings->byteSize("output-spare-bytes", common.outputSpareBytes,
                     "memory, per daemon, for memfds made ahead (pages "
                     "allocated) for the large outputs a co-located caller "
                     "receives as files, so that the run does not fault them "
                     "in; 0: none");
  settings
      ->text("task-threads", common.taskThreads,
             "tasks run at once (at least one per device); auto: the CPUs "
             "this process may run on, so concurrent calls use every core")
      ->check(CLI::Validator(
          [](std::string &value) -> std::string {
            absl::StatusOr<int> threads = parseThreadCount(value);
            return threads.ok() ? "" : std::string(threads.status().message());
          },
          "THREADS"));
  settings->text("task-verify-key", common.taskVerifyKey,
                 "PEM public key of kilnd's task key (kilnd's <cache-dir>/"
                 "keys/task-public-key.pem); tasks whose signature does not "
                 "verify are refused. Empty: use the key kilnd sends at "
                 "registration");
  settings->text("tls-ca", common.tlsCa,
                 "PEM CA bundle kilnd's certificate chains to; dials kilnd "
                 "over TLS. Empty: plaintext");
  settings->text("tls-cert", common.tlsCert,
                 "PEM certificate this agent presents (mTLS; with --tls-key). "
                 "Its CN is the agent's id (the default --agent-id) and its O "
                 "must be kiln:agents");
  settings->text("tls-key", common.tlsKey, "PEM private key of --tls-cert");
  settings->text("tls-server-name", common.tlsServerName,
                 "the name kilnd's certificate must carry (default: the host "
                 "dialed; with --daemon-service, its NAME)");
  settings->text("token", common.token,
                 "bearer token (role agent) sent on every call; prefer the "
                 "environment variable, which ps does not show");
  settings
      ->integer("max-loaded-executables", common.maxLoadedExecutables, 1,
                "executables kept loaded; past it the least recently used is "
                "unloaded")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  settings->text(
      "direct-poll-us", common.directPollUs,
      "microseconds a direct channel (a co-located client's calls) polls for "
      "the client's next call after answering one, before its thread "
      "sleeps: a call read while polling skips the kernel's wake-up, tens of "
      "microseconds on a VM; 0: never poll; a number: that window; auto: "
      "where one run's host threads (a cpu agent's --compute-threads, by "
      "default every CPU) leave CPUs free, 100 at first and then each "
      "channel's window follows its client's pace up to 1000 (twice the "
      "time it took to call again), as many channels polling at once as "
      "they leave; else 0");
  settings->text("local-link-fd", common.localLinkFd,
                 "set by kilnd for the agents it starts: an inherited socket "
                 "on which tasks and results travel, tensors as shared files "
                 "instead of blob transfers. Empty: tasks come on "
                 "Agent.Connect");
  settings->oneOf("log-level", common.logLevel,
                  {"trace", "debug", "info", "warn", "error", "critical",
                   "off"},
                  "trace, debug, info, warn, error, critical or off");
  settings->oneOf("log-format", common.logFormat, {"text", "json"},
                  "text, or json (one object per line: time, level, logger, "
                  "msg, request_id)");
  for (const AgentFlag &flag : extraFlags)
    if (flag.value) {
      *flag.value = flag.defaultValue;
      settings->text(flag.name, *flag.value, flag.help);
    } else if (flag.enabled) {
      *flag.enabled = false;
      settings->boolean(flag.name, *flag.enabled, flag.help, true);
    }
  settings->commandFlag("-h,--help", common.help, "print this help and exit");
  return settings;
}

/// The CN of the certificate in `path`: a certificate-holding agent's id.
absl::StatusOr<std::string>
certificateIdentity(const std::filesystem::path &path) {
  absl::StatusOr<std::string> pem = readFlagFile(path, "--tls-cert");
  if (!pem.ok())
    return pem.status();
  absl::StatusOr<CertificateSubject> subject = certificateSubject(*pem);
  if (!subject.ok())
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls-cert ", path.string(), ": ", subject.status().message()));
  if (subject->commonName.empty())
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls-cert ", path.string(),
        ": the certificate has no CN (the agent's id)"));
  const auto &groups = subject->organizations;
  if (std::find(groups.begin(), groups.end(), kAgentsOrganization) ==
      groups.end())
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls-cert ", path.string(), ": the certificate's subject has no O=",
        kAgentsOrganization, ", so kilnd would not take it as an agent's"));
  return subject->commonName;
}

} // namespace

std::string defaultCacheDir(absl::string_view kind) {
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return absl::StrCat(xdg, "/kiln/agent-", kind);
  if (const char *home = std::getenv("HOME"); home && *home)
    return absl::StrCat(home, "/.cache/kiln/agent-", kind);
  return absl::StrCat("/tmp/kiln-agent-", kind, "-", ::getuid());
}

std::string agentUsage(std::string_view program, std::string_view kind,
                       const std::vector<AgentFlag> &extraFlags) {
  CommonFlags common;
  common.cacheDir = defaultCacheDir(std::string(kind));
  common.agentId = defaultAgentId(std::string(kind));
  std::vector<std::string> shown(extraFlags.size());
  std::unique_ptr<bool[]> shownSwitches(new bool[extraFlags.size() + 1]);
  std::vector<AgentFlag> flags = extraFlags;
  for (size_t i = 0; i < flags.size(); ++i) {
    if (flags[i].value)
      flags[i].value = &shown[i];
    else
      flags[i].enabled = &shownSwitches[i];
  }
  return declareFlags(program, kind, flags, common)->help();
}

absl::StatusOr<AgentCommandLine>
parseAgentFlags(const std::vector<std::string> &args, std::string_view kindView,
                const std::vector<AgentFlag> &extraFlags,
                const Environment &env) {
  std::string kind(kindView);
  CommonFlags common;
  common.cacheDir = defaultCacheDir(kind);
  common.agentId = defaultAgentId(kind);
  std::unique_ptr<Settings> settings =
      declareFlags(absl::StrCat("kiln-agent-", kind), kind, extraFlags, common);
  RETURN_IF_ERROR(settings->parse(args, env));
  AgentCommandLine commandLine;
  commandLine.help = common.help;
  if (commandLine.help)
    return commandLine;

  AgentOptions &options = commandLine.options;
  for (absl::string_view address :
       absl::StrSplit(common.daemon, ',', absl::AllowEmpty())) {
    if (common.daemon.empty())
      break;
    address = absl::StripAsciiWhitespace(address);
    if (address.empty())
      return absl::InvalidArgumentError(absl::StrCat(
          "--daemon '", common.daemon,
          "': an empty address (HOST:PORT, or a comma list of them)"));
    if (std::find(commandLine.daemons.begin(), commandLine.daemons.end(),
                  address) != commandLine.daemons.end())
      return absl::InvalidArgumentError(
          absl::StrCat("--daemon names ", address, " twice"));
    commandLine.daemons.emplace_back(address);
  }
  if (!common.daemonService.empty()) {
    if (!common.daemon.empty())
      return absl::InvalidArgumentError(
          "give --daemon or --daemon-service, not both");
    size_t colon = common.daemonService.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "--daemon-service '", common.daemonService, "' is not NAME:PORT"));
    commandLine.daemonService = common.daemonService;
    commandLine.serviceRefresh =
        std::chrono::seconds(common.daemonServiceRefreshS);
    options.daemonAddress = common.daemonService;
    options.credentials.tlsServerName = common.daemonService.substr(0, colon);
  } else if (common.daemon.empty()) {
    return absl::InvalidArgumentError(
        "--daemon HOST:PORT is required (the address of kilnd)");
  } else {
    options.daemonAddress = commandLine.daemons.front();
  }
  if (!common.tlsServerName.empty())
    options.credentials.tlsServerName = common.tlsServerName;
  options.cacheDir = common.cacheDir;
  if (options.cacheDir.empty())
    return absl::InvalidArgumentError("--cache-dir must not be empty");
  options.credentials.tlsCa = common.tlsCa;
  options.credentials.tlsCert = common.tlsCert;
  options.credentials.tlsKey = common.tlsKey;
  options.credentials.token = common.token;
  options.agentId = common.agentId;
  if (!options.credentials.tlsCert.empty()) {
    absl::StatusOr<std::string> agentIdFromCertificate =
        certificateIdentity(options.credentials.tlsCert);
    if (!agentIdFromCertificate.ok())
      return agentIdFromCertificate.status();
    if (options.agentId == defaultAgentId(kind))
      options.agentId = *agentIdFromCertificate;
    else if (options.agentId != *agentIdFromCertificate)
      return absl::InvalidArgumentError(absl::StrCat(
          "--agent-id '", options.agentId, "' is not the identity in --tls-cert (CN=",
          *agentIdFromCertificate,
          "): kilnd takes an agent's id from its certificate; leave --agent-id "
          "out"));
  }
  if (options.agentId.empty() ||
      options.agentId.find('/') != std::string::npos)
    return absl::InvalidArgumentError(absl::StrCat(
        "--agent-id '", options.agentId,
        "' must be non-empty and contain no '/' (device ids are "
        "<agent id>/<index>)"));
  options.residentBytes = common.residentBytes;
  options.heldTensorBytes = common.heldTensorBytes;
  options.outputSpareBytes = common.outputSpareBytes;
  options.taskThreads = *parseThreadCount(common.taskThreads);
  options.maxLoadedExecutables =
      static_cast<size_t>(common.maxLoadedExecutables);
  if (common.directPollUs == "auto") {
    commandLine.directPollAuto = true;
  } else {
    int64_t micros = -1;
    if (!absl::SimpleAtoi(common.directPollUs, &micros) || micros < 0 ||
        micros > 1'000'000)
      return absl::InvalidArgumentError(absl::StrCat(
          "--direct-poll-us: '", common.directPollUs,
          "' is not 'auto' or a count of microseconds from 0 to 1000000"));
    // At most one poller per CPU: what the flag asks for, where it fits.
    options.directPoll = {.window = std::chrono::microseconds(micros),
                          .pollers = availableCpus()};
  }
  options.taskVerifyKey = common.taskVerifyKey;
  if (const std::string &fd = common.localLinkFd; !fd.empty()) {
    int value = -1;
    if (!absl::SimpleAtoi(fd, &value) || value < 3 ||
        ::fcntl(value, F_GETFD) < 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "--local-link-fd: '", fd,
          "' is not an open descriptor (kilnd passes it to the agents it "
          "starts; leave it out otherwise)"));
    if (commandLine.daemons.size() != 1)
      return absl::InvalidArgumentError(
          "--local-link-fd belongs to the one kilnd that started the agent; "
          "it goes with a single --daemon address");
    // Not for the agent's own children (qemu runners, compilers).
    ::fcntl(value, F_SETFD, FD_CLOEXEC);
    options.localLinkFd = value;
  }
  commandLine.logLevel = common.logLevel;
  commandLine.logFormat = common.logFormat;
  return commandLine;
}

DirectPoll autoDirectPoll(const DeviceBackend &backend, int cpus) {
  int spare = cpus - backend.hostThreadsPerRun();
  if (spare <= 0)
    return {};
  return {.window = DirectChannels::kDefaultPoll,
          .cap = DirectChannels::kDefaultPollCap,
          .pollers = spare};
}

absl::StatusOr<int> parseThreadCount(absl::string_view value) {
  if (value == "auto")
    return std::clamp(availableCpus(), 1, 1024);
  int threads = 0;
  if (!absl::SimpleAtoi(value, &threads) || threads < 1 || threads > 1024)
    return absl::InvalidArgumentError(absl::StrCat(
        "'", value, "' is not 'auto' or a count between 1 and 1024"));
  return threads;
}

int agentMain(int argc, char **argv, std::string_view kind,
              const BackendFactory &makeBackend,
              const std::vector<AgentFlag> &extraFlags) {
  std::string program = argc > 0 ? argv[0] : "kiln-agent";
  std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  absl::StatusOr<AgentCommandLine> commandLine =
      parseAgentFlags(args, kind, extraFlags, processEnvironment());
  if (!commandLine.ok()) {
    std::cerr << program << ": " << commandLine.status().message() << "\n";
    return 2;
  }
  if (commandLine->help) {
    std::cout << agentUsage(program, kind, extraFlags);
    return 0;
  }
  // Logs go to stderr, named after the agent, so that they stay apart from
  // kilnd's when it runs local agents as children.
  absl::Status logging = configureLogging(
      absl::StrCat("agent-", std::string(kind)), commandLine->logLevel,
      *parseLogFormat(commandLine->logFormat));
  if (!logging.ok()) {
    std::cerr << program << ": " << logging.message() << "\n";
    return 2;
  }

  // Block the shutdown signals in every thread (gRPC's included, so block
  // them before any starts); one thread takes them with sigwait.
  sigset_t shutdownSignals;
  sigemptyset(&shutdownSignals);
  sigaddset(&shutdownSignals, SIGINT);
  sigaddset(&shutdownSignals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &shutdownSignals, nullptr);

  absl::StatusOr<std::unique_ptr<DeviceBackend>> backend = makeBackend();
  if (!backend.ok()) {
    spdlog::error("cannot start the {} backend: {}", kind,
                  backend.status().ToString());
    return 1;
  }
  if (commandLine->directPollAuto)
    commandLine->options.directPoll = autoDirectPoll(**backend, availableCpus());
  const DirectPoll &poll = commandLine->options.directPoll;
  if (poll.cap > poll.window)
    spdlog::info("direct channels poll {}-{} us for the next call, as their "
                 "clients' pace asks ({} at once)",
                 poll.window.count(), poll.cap.count(), poll.pollers);
  else
    spdlog::info("direct channels poll {} us for the next call ({} at once)",
                 poll.window.count(), poll.pollers);
  // One session per daemon, sharing the blob cache and resident set.
  absl::StatusOr<std::shared_ptr<AgentStores>> stores =
      AgentStores::open(commandLine->options);
  if (!stores.ok()) {
    spdlog::error("cannot start the agent: {}", stores.status().ToString());
    return 1;
  }
  AgentSessionSet sessions(commandLine->options, **backend, *stores);
  if (commandLine->daemonService.empty()) {
    if (absl::Status started = sessions.serve(commandLine->daemons); !started.ok()) {
      spdlog::error("cannot start the agent: {}", started.ToString());
      return 1;
    }
  }

  std::atomic<bool> done{false};
  std::thread signalWatcher([&] {
    int signal = 0;
    while (sigwait(&shutdownSignals, &signal) == 0) {
      if (done.load())
        return;
      spdlog::info("received {}, shutting down",
                   signal == SIGINT ? "SIGINT" : "SIGTERM");
      sessions.stop();
      return;
    }
  });
  // Each session reconnects to its daemon on its own: one replica going
  // away leaves the others served. A session that ends with an error (a
  // refused registration) ends them all.
  absl::Status status;
  if (!commandLine->daemonService.empty()) {
    status = sessions.followService(commandLine->daemonService,
                                    commandLine->serviceRefresh);
    if (!status.ok())
      sessions.stop();
  }
  absl::Status ended = sessions.wait();
  if (status.ok())
    status = ended;
  done.store(true);
  // Wake the watcher if no signal came (run() ended on its own).
  pthread_kill(signalWatcher.native_handle(), SIGTERM);
  signalWatcher.join();
  if (!status.ok()) {
    spdlog::error("agent stopped: {}", status.ToString());
    return 1;
  }
  spdlog::info("agent stopped");
  return 0;
}

} // namespace kiln::agent
