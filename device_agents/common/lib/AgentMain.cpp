//===- AgentMain.cpp - the main() every agent binary shares ---------------===//
//
// This file implements agent flag parsing, logging setup, SIGTERM/SIGINT
// handling and the agent process's top level.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/AgentMain.h"

#include "kiln/common/AtomicFile.h"
#include "kiln/common/ByteSize.h"
#include "kiln/common/Credentials.h"

#include "kiln/common/Logging.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <atomic>
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <thread>
#include <unistd.h>

namespace kiln::agent {
namespace {

constexpr const char *kLogLevels[] = {"trace", "debug", "info", "warn",
                                      "error", "critical", "off"};

std::string hostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0')
    return "localhost";
  return name;
}

std::string defaultCacheDir(absl::string_view kind) {
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return absl::StrCat(xdg, "/kiln/agent-", kind);
  if (const char *home = std::getenv("HOME"); home && *home)
    return absl::StrCat(home, "/.cache/kiln/agent-", kind);
  return absl::StrCat("/tmp/kiln-agent-", kind, "-", ::getuid());
}

std::string defaultAgentId(absl::string_view kind) {
  return absl::StrCat(kind, "-", hostName(), "-", ::getpid());
}

/// KILN_AGENT_CACHE_DIR for cache-dir (not KILN_CACHE_DIR: that is kilnd's,
/// and local agents inherit kilnd's environment).
/// CPUs this process may run on (its affinity mask: taskset, cpusets).
int availableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::string agentEnvName(absl::string_view flag) {
  std::string name = absl::StrCat("KILN_AGENT_", flag);
  for (char &c : name)
    c = c == '-' ? '_' : absl::ascii_toupper(c);
  return name;
}

struct FlagInfo {
  std::string defaultValue;
  std::string help;
};

/// The common flags, in --help order.
std::vector<std::pair<std::string, FlagInfo>>
commonFlags(absl::string_view kind) {
  return {
      {"daemon", {"", "host:port of kilnd (required)"}},
      {"cache-dir", {defaultCacheDir(kind), "local blob cache directory"}},
      {"agent-id",
       {defaultAgentId(kind),
        "id this agent registers under (with --tls-cert: the certificate's "
        "CN)"}},
      {"resident-bytes",
       {"4GiB", "memory budget for resident parameters (K/M/G/KiB/MiB/GiB)"}},
      {"task-threads",
       {"auto", "tasks run at once (at least one per device); auto: the CPUs "
                "this process may run on, so concurrent calls use every core"}},
      {"task-verify-key",
       {"", "PEM public key of kilnd's task key (kilnd's <cache-dir>/keys/"
            "task-public-key.pem); tasks whose signature does not verify "
            "are refused. Empty: use the key kilnd sends at registration"}},
      {"tls-ca",
       {"", "PEM CA bundle kilnd's certificate chains to; dials kilnd over "
            "TLS. Empty: plaintext"}},
      {"tls-cert",
       {"", "PEM certificate this agent presents (mTLS; with --tls-key). "
            "Its CN is the agent's id (the default --agent-id) and its O "
            "must be kiln:agents"}},
      {"tls-key", {"", "PEM private key of --tls-cert"}},
      {"token",
       {"", "bearer token (role agent) sent on every call; prefer the "
            "environment variable, which ps does not show"}},
      {"max-loaded-executables",
       {"256", "executables kept loaded; past it the least recently used is "
               "unloaded"}},
      {"local-link-fd",
       {"", "set by kilnd for the agents it starts: an inherited socket on "
            "which tasks and results travel, tensors as shared files "
            "instead of blob transfers. Empty: tasks come on Agent.Connect"}},
      {"log-level",
       {"info", "trace, debug, info, warn, error, critical or off"}},
      {"log-format",
       {"text", "text, or json (one object per line: time, level, logger, "
                "msg, request_id)"}},
  };
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

std::string agentUsage(std::string_view programView, std::string_view kindView,
                       const std::vector<AgentFlag> &extraFlags) {
  std::string program(programView), kind(kindView);
  std::string usage = absl::StrCat(
      "usage: ", program, " --daemon HOST:PORT [flags]\n\n", "Runs ", kind,
      " executables for a Kiln daemon (kilnd).\n\nflags:\n");
  auto line = [&](absl::string_view name, absl::string_view defaultValue,
                  absl::string_view help) {
    absl::StrAppend(&usage, "  --", name, "  [env ", agentEnvName(name),
                    "]\n      ", help);
    if (!defaultValue.empty())
      absl::StrAppend(&usage, " (default: ", defaultValue, ")");
    absl::StrAppend(&usage, "\n");
  };
  for (const auto &[name, info] : commonFlags(kind))
    line(name, info.defaultValue, info.help);
  for (const AgentFlag &flag : extraFlags)
    line(flag.name, flag.defaultValue, flag.help);
  absl::StrAppend(&usage, "  --help\n      print this help and exit\n");
  return usage;
}

absl::StatusOr<AgentCommandLine>
parseAgentFlags(const std::vector<std::string> &args,
                std::string_view kindView,
                const std::vector<AgentFlag> &extraFlags) {
  std::string kind(kindView);
  std::map<std::string, std::string> values;
  for (const auto &[name, info] : commonFlags(kind))
    values[name] = info.defaultValue;
  for (const AgentFlag &flag : extraFlags) {
    values[flag.name] = flag.defaultValue;
  }
  // The environment (KILN_AGENT_<FLAG>, e.g. KILN_AGENT_DAEMON) overrides
  // defaults; flags override the environment.
  for (auto &[name, value] : values)
    if (const char *fromEnv = std::getenv(agentEnvName(name).c_str()))
      value = fromEnv;
  AgentCommandLine commandLine;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      commandLine.help = true;
      continue;
    }
    if (arg.substr(0, 2) != "--")
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument '", arg, "' (flags start with --)"));
    std::string name(arg.substr(2));
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (!values.count(name))
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag '--", name, "' (see --help)"));
    if (!value) {
      if (i + 1 >= args.size())
        return absl::InvalidArgumentError(
            absl::StrCat("flag '--", name, "' needs a value"));
      value = args[++i];
    }
    values[name] = *value;
  }
  if (commandLine.help)
    return commandLine;

  AgentOptions &options = commandLine.options;
  options.daemonAddress = values["daemon"];
  if (options.daemonAddress.empty())
    return absl::InvalidArgumentError(
        "--daemon HOST:PORT is required (the address of kilnd)");
  options.cacheDir = values["cache-dir"];
  if (options.cacheDir.empty())
    return absl::InvalidArgumentError("--cache-dir must not be empty");
  options.credentials.tlsCa = values["tls-ca"];
  options.credentials.tlsCert = values["tls-cert"];
  options.credentials.tlsKey = values["tls-key"];
  options.credentials.token = values["token"];
  options.agentId = values["agent-id"];
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
  absl::StatusOr<int64_t> resident = parseByteSize(values["resident-bytes"]);
  if (!resident.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("--resident-bytes: ", resident.status().message()));
  options.residentBytes = *resident;
  absl::StatusOr<int> taskThreads = parseThreadCount(values["task-threads"]);
  if (!taskThreads.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("--task-threads: ", taskThreads.status().message()));
  options.taskThreads = *taskThreads;
  if (int maxLoaded = 0;
      !absl::SimpleAtoi(values["max-loaded-executables"], &maxLoaded) ||
      maxLoaded < 1 || maxLoaded > 1 << 20)
    return absl::InvalidArgumentError(
        absl::StrCat("--max-loaded-executables: '",
                     values["max-loaded-executables"],
                     "' is not a count between 1 and 1048576"));
  else
    options.maxLoadedExecutables = static_cast<size_t>(maxLoaded);
  options.taskVerifyKey = values["task-verify-key"];
  if (const std::string &fd = values["local-link-fd"]; !fd.empty()) {
    int value = -1;
    if (!absl::SimpleAtoi(fd, &value) || value < 3 ||
        ::fcntl(value, F_GETFD) < 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "--local-link-fd: '", fd,
          "' is not an open descriptor (kilnd passes it to the agents it "
          "starts; leave it out otherwise)"));
    // Not for the agent's own children (qemu runners, compilers).
    ::fcntl(value, F_SETFD, FD_CLOEXEC);
    options.localLinkFd = value;
  }
  commandLine.logLevel = values["log-level"];
  bool knownLevel = false;
  for (const char *level : kLogLevels)
    knownLevel = knownLevel || commandLine.logLevel == level;
  if (!knownLevel)
    return absl::InvalidArgumentError(
        absl::StrCat("--log-level: '", commandLine.logLevel,
                     "' is not one of trace, debug, info, warn, error, "
                     "critical, off"));
  commandLine.logFormat = values["log-format"];
  if (absl::StatusOr<LogFormat> format = parseLogFormat(commandLine.logFormat);
      !format.ok())
    return format.status();
  for (const AgentFlag &flag : extraFlags)
    if (flag.value)
      *flag.value = values[flag.name];
  return commandLine;
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
      parseAgentFlags(args, kind, extraFlags);
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
  absl::StatusOr<std::unique_ptr<AgentSession>> session =
      AgentSession::create(commandLine->options, **backend);
  if (!session.ok()) {
    spdlog::error("cannot start the agent: {}", session.status().ToString());
    return 1;
  }
  spdlog::info("{} agent {} serving daemon {} (cache {})", kind,
               commandLine->options.agentId, commandLine->options.daemonAddress,
               commandLine->options.cacheDir.string());

  std::atomic<bool> done{false};
  std::thread signalWatcher([&] {
    int signal = 0;
    while (sigwait(&shutdownSignals, &signal) == 0) {
      if (done.load())
        return;
      spdlog::info("received {}, shutting down",
                   signal == SIGINT ? "SIGINT" : "SIGTERM");
      (*session)->stop();
      return;
    }
  });
  absl::Status status = (*session)->run();
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
