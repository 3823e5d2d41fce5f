//===- AgentMainTest.cpp - the flags every agent binary takes -------------===//
//
// This file tests parseAgentFlags, agentUsage, autoDirectPoll and
// kiln::parseByteSize (which the agents' --resident-bytes uses).
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/AgentMain.h"
#include "kiln/agent/DaemonChannel.h"
#include "kiln/agent/cpu/CpuBackend.h"
#include "kiln/agent/null/NullBackend.h"
#include "kiln/agent/acap/AcapBackend.h"
#include "kiln/common/ByteSize.h"

#include <gtest/gtest.h>

#include <fstream>

#include <sched.h>

#include <unistd.h>

namespace kiln::agent {
namespace {

TEST(AgentMainTest, DefaultsNeedOnlyTheDaemon) {
  auto flags = parseAgentFlags({"--daemon", "localhost:7070"}, "cpu");
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->options.daemonAddress, "localhost:7070");
  EXPECT_EQ(flags->options.residentBytes, int64_t{4} << 30);
  // auto: one task at a time per CPU this process may use.
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(flags->options.taskThreads, CPU_COUNT(&set));
  EXPECT_EQ(flags->logLevel, "info");
  EXPECT_FALSE(flags->options.cacheDir.empty());
  EXPECT_TRUE(flags->options.agentId.starts_with("cpu-"));
  EXPECT_TRUE(flags->options.agentId.ends_with("-" + std::to_string(getpid())));
}

TEST(AgentMainTest, AcceptsBothValueForms) {
  auto flags = parseAgentFlags({"--daemon=d:1", "--cache-dir", "/tmp/c",
                                "--agent-id=me", "--resident-bytes=512MiB",
                                "--log-level", "debug", "--task-threads=3"},
                               "cpu");
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->options.daemonAddress, "d:1");
  EXPECT_EQ(flags->options.cacheDir, "/tmp/c");
  EXPECT_EQ(flags->options.agentId, "me");
  EXPECT_EQ(flags->options.residentBytes, int64_t{512} << 20);
  EXPECT_EQ(flags->options.taskThreads, 3);
  EXPECT_EQ(flags->logLevel, "debug");
}

TEST(AgentMainTest, DirectPollIsAutoOrMicroseconds) {
  auto byDefault = parseAgentFlags({"--daemon", "d:1"}, "cpu");
  ASSERT_TRUE(byDefault.ok()) << byDefault.status();
  EXPECT_TRUE(byDefault->directPollAuto);
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  auto given = parseAgentFlags({"--daemon", "d:1", "--direct-poll-us=250"}, "cpu");
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_FALSE(given->directPollAuto);
  EXPECT_EQ(given->options.directPoll.window, std::chrono::microseconds(250));
  EXPECT_EQ(given->options.directPoll.cap, std::chrono::microseconds(0)); // fixed
  // At most one polling channel per CPU.
  EXPECT_EQ(given->options.directPoll.pollers, CPU_COUNT(&set));
  auto never = parseAgentFlags({"--daemon", "d:1", "--direct-poll-us", "0"}, "cpu");
  ASSERT_TRUE(never.ok()) << never.status();
  EXPECT_EQ(never->options.directPoll.window, std::chrono::microseconds(0));
  for (const char *bad : {"-1", "soon", "1000001", "1.5"}) {
    auto flags = parseAgentFlags({"--daemon", "d:1", "--direct-poll-us", bad}, "cpu");
    ASSERT_FALSE(flags.ok()) << bad;
    EXPECT_EQ(flags.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(flags.status().message().find("--direct-poll-us"), std::string::npos)
        << flags.status();
  }
}

TEST(AgentMainTest, AutoDirectPollPollsOnlyOnCpusARunLeavesFree) {
  // A cpu agent's run keeps its compute threads busy, a simulated acap
  // array's its tile threads; other backends wait on their device with one.
  auto expect = [](const DeviceBackend &backend, int cpus, int pollers) {
    DirectPoll poll = autoDirectPoll(backend, cpus);
    EXPECT_EQ(poll.pollers, pollers) << cpus << " CPUs";
    EXPECT_EQ(poll.window, pollers ? DirectChannels::kDefaultPoll
                                   : std::chrono::microseconds(0))
        << cpus << " CPUs";
    // Where it polls, each channel adapts its window up to the cap.
    EXPECT_EQ(poll.cap, pollers ? DirectChannels::kDefaultPollCap
                                : std::chrono::microseconds(0))
        << cpus << " CPUs";
  };
  expect(CpuBackend(hostCpuModel(), 1), 2, 1);
  expect(CpuBackend(hostCpuModel(), 2), 2, 0);
  expect(CpuBackend(hostCpuModel(), 3), 8, 5);
  auto other = null::NullBackend::create({});
  ASSERT_TRUE(other.ok()) << other.status();
  expect(**other, 1, 0);
  expect(**other, 2, 1);
  auto simulated = acap::AcapBackend::create({.simulate = true, .threads = 4});
  ASSERT_TRUE(simulated.ok()) << simulated.status();
  expect(**simulated, 4, 0);
  expect(**simulated, 6, 2);
}

TEST(AgentMainTest, SeveralDaemonsAreAListOfReplicas) {
  auto flags = parseAgentFlags({"--daemon", "a:1, b:2,c:3"}, "cpu");
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->daemons, (std::vector<std::string>{"a:1", "b:2", "c:3"}));
  EXPECT_EQ(flags->options.daemonAddress, "a:1");
  auto one = parseAgentFlags({"--daemon", "a:1"}, "cpu");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->daemons, std::vector<std::string>{"a:1"});
}

TEST(AgentMainTest, BadCommandLinesNameTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string mentions;
  };
  for (const Case &c : std::vector<Case>{
           {{"--daemon", "d:1", "--frobnicate"}, "--frobnicate"},
           {{"--daemon", "d:1,,e:2"}, "an empty address"},
           {{"--daemon", "d:1,d:1"}, "names d:1 twice"},
           {{"--daemon", "d:1,e:2", "--local-link-fd", "1"}, "--local-link-fd"},
           {{}, "--daemon"},
           {{"--daemon"}, "needs a value"},
           {{"--daemon", "d:1", "--resident-bytes", "lots"}, "--resident-bytes"},
           {{"--daemon", "d:1", "--max-loaded-executables", "0"},
            "--max-loaded-executables"},
           {{"--daemon", "d:1", "--log-level", "loud"}, "--log-level"},
           {{"--daemon", "d:1", "--task-threads", "0"}, "--task-threads"},
           {{"--daemon", "d:1", "stray"}, "stray"},
           {{"--daemon", "d:1", "--agent-id", "a/b"}, "no '/'"},
           {{"--daemon", "d:1", "--tls-cert", "/nonexistent/agent.pem"},
            "--tls-cert: cannot read /nonexistent/agent.pem"},
           {{"--daemon", "d:1", "--tls-cert", "/proc/self/status"},
            "not a PEM X.509 certificate"},
       }) {
    auto flags = parseAgentFlags(c.args, "cpu");
    ASSERT_FALSE(flags.ok()) << c.mentions;
    EXPECT_EQ(flags.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(flags.status().message().find(c.mentions), std::string::npos)
        << flags.status();
  }
}

TEST(AgentMainTest, HelpListsEveryFlagWithItsDefault) {
  std::string extra;
  std::vector<AgentFlag> extraFlags = {
      {"simulator", "off", "simulation mode", &extra}};
  auto flags = parseAgentFlags({"--help"}, "cpu", extraFlags);
  ASSERT_TRUE(flags.ok());
  EXPECT_TRUE(flags->help);
  std::string usage = agentUsage("kiln-agent-cpu", "cpu", extraFlags);
  for (const char *flag :
       {"--daemon", "--cache-dir", "--agent-id", "--resident-bytes",
        "--task-threads", "--max-loaded-executables", "--log-level", "--help",
        "--simulator",
        "(default: 4GiB)", "(default: off)", "(default: info)"})
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
}

TEST(AgentMainTest, EnvironmentGivesDefaultsThatFlagsOverride) {
  std::string simulator;
  std::vector<AgentFlag> extraFlags = {
      {"simulator", "off", "simulation mode", &simulator}};
  Environment env = {{"KILN_AGENT_DAEMON", "from-env:1"},
                     {"KILN_AGENT_RESIDENT_BYTES", "1GiB"},
                     {"KILN_AGENT_SIMULATOR", "on"},
                     {"KILN_CACHE_DIR", "kilnd's, not the agent's"}};
  auto flags = parseAgentFlags({"--resident-bytes=2GiB"}, "qemu", extraFlags,
                               env);
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->options.daemonAddress, "from-env:1");
  EXPECT_EQ(flags->options.residentBytes, int64_t{2} << 30);
  EXPECT_EQ(simulator, "on");
  EXPECT_NE(flags->options.cacheDir.string(), "kilnd's, not the agent's");
  auto bad = parseAgentFlags({"--daemon=d:1"}, "cpu", {},
                             {{"KILN_AGENT_TASK_THREADS", "many"}});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find(
                "environment variable KILN_AGENT_TASK_THREADS: 'many'"),
            std::string::npos)
      << bad.status();
}

TEST(AgentMainTest, BackendFlagsAreParsedToo) {
  std::string simulator;
  std::vector<AgentFlag> extraFlags = {
      {"simulator", "off", "simulation mode", &simulator}};
  auto flags = parseAgentFlags({"--daemon", "d:1", "--simulator=on"}, "qemu",
                               extraFlags);
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(simulator, "on");
}

TEST(AgentMainTest, ParsesByteSizesAsThePythonClientDoes) {
  // tests/byte_sizes.tsv: "text<TAB>bytes" or "text<TAB>error".
  std::ifstream cases(KILN_TEST_BYTE_SIZES);
  ASSERT_TRUE(cases) << KILN_TEST_BYTE_SIZES;
  int checked = 0;
  for (std::string line; std::getline(cases, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    size_t tab = line.rfind('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    std::string text = line.substr(0, tab), expected = line.substr(tab + 1);
    absl::StatusOr<int64_t> parsed = parseByteSize(text);
    if (expected == "error") {
      EXPECT_FALSE(parsed.ok()) << "'" << text << "' parsed as " << *parsed;
      if (!parsed.ok())
        EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    } else {
      ASSERT_TRUE(parsed.ok()) << "'" << text << "': " << parsed.status();
      EXPECT_EQ(*parsed, std::stoll(expected)) << "'" << text << "'";
    }
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

TEST(DaemonChannelTest, ATokenNeverTravelsInTheClearOffTheMachine) {
  DaemonCredentials token;
  token.token = "secret";
  auto remote = dialDaemon("10.1.2.3:50051", token, std::chrono::seconds(1));
  EXPECT_EQ(remote.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(remote.status().message().find("--tls-ca"), std::string::npos);
  EXPECT_TRUE(dialDaemon("127.0.0.1:50051", token, std::chrono::seconds(1)).ok());
  DaemonCredentials certOnly;
  certOnly.tlsCert = "agent.pem";
  certOnly.tlsKey = "agent.key";
  EXPECT_EQ(dialDaemon("127.0.0.1:1", certOnly, std::chrono::seconds(1))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

} // namespace
} // namespace kiln::agent
