//===- AgentSessionTest.cpp - the agent against a loopback fake daemon ----===//
//
// This file tests AgentSession end to end over real gRPC: registration,
// heartbeats (also during a long run), tasks with artifact fetches, blob
// uploads of large outputs, failures as results, and reconnection.
//
//===----------------------------------------------------------------------===//
#include "FakeDaemon.h"
#include "TestSupport.h"
#include "kiln/common/AgentProtocol.h"

#include "kiln/agent/AgentSession.h"
#include "kiln/agent/cpu/CpuBackend.h"
#include "kiln/common/Digest.h"
#include "kiln/common/TensorTypes.h"

#include "absl/strings/str_cat.h"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

namespace kiln::agent {
namespace {

using test::FakeDaemon;
using test::TempDir;

class AgentSessionTest : public ::testing::Test {
protected:
  static constexpr int64_t kHeartbeatMs = 20;

  void SetUp() override {
    AgentOptions options;
    options.daemonAddress = daemon.address();
    options.agentId = "cpu-test-agent";
    options.cacheDir = dir.path() / "cache";
    options.taskThreads = 2;
    options.initialBackoff = std::chrono::milliseconds(10);
    options.maxBackoff = std::chrono::milliseconds(200);
    auto created = AgentSession::create(options, backend);
    ASSERT_TRUE(created.ok()) << created.status();
    session = std::move(*created);
    runner = std::thread([this] { runStatus = session->run(); });
  }

  void TearDown() override {
    if (session)
      session->stop();
    if (runner.joinable())
      runner.join();
    EXPECT_TRUE(runStatus.ok()) << runStatus;
  }

  /// A task computing a + 2x with the artifact and parameter in the daemon.
  v1::Task axpyTask(int n, const std::string &id,
                    const std::string &source = "") {
    auto path = test::compileSharedObject(
        dir.path(), absl::StrCat("k", n, id),
        source.empty() ? test::axpyKernelSource(n) : source);
    EXPECT_TRUE(path.ok()) << path.status();
    std::string artifactBytes = test::readFileBytes(*path);
    daemon.addBlob(artifactBytes);
    v1::Task task;
    task.set_task_id(id);
    task.set_device_id("cpu-test-agent/0");
    *task.mutable_record() = test::axpyRecord(n, artifactBytes);
    *task.mutable_executable() = digestOf(task.record().SerializeAsString());
    std::vector<float> a(n), x(n);
    for (int i = 0; i < n; ++i) {
      a[i] = static_cast<float>(i);
      x[i] = 1.5f;
    }
    *task.add_parameters() = daemon.addBlob(test::floatBytes(a));
    v1::Tensor *input = task.add_inputs();
    *input->mutable_type() = task.record().manifest().inputs(0).type();
    input->set_data(test::floatBytes(x));
    return task;
  }

  /// Waits for the result of `taskId`.
  v1::TaskResult resultOf(const std::string &taskId) {
    v1::TaskResult found;
    bool arrived = daemon.waitFor([&] {
      for (const v1::TaskResult &result : daemon.results())
        if (result.task_id() == taskId) {
          found = result;
          return true;
        }
      return false;
    });
    EXPECT_TRUE(arrived) << "no result for " << taskId;
    return found;
  }

  static void expectAxpy(const std::string &bytes, int n) {
    std::vector<float> out = test::bytesToFloats(bytes);
    ASSERT_EQ(static_cast<int>(out.size()), n);
    for (int i = 0; i < n; ++i)
      ASSERT_FLOAT_EQ(out[i], static_cast<float>(i) + 3.0f) << "at " << i;
  }

  TempDir dir;
  FakeDaemon daemon{kHeartbeatMs};
  CpuBackend backend;
  std::unique_ptr<AgentSession> session;
  std::thread runner;
  absl::Status runStatus;
};

TEST_F(AgentSessionTest, RegistersItsCpuDevice) {
  ASSERT_TRUE(daemon.waitFor([&] { return !daemon.registrations().empty(); }));
  v1::RegisterAgent registration = daemon.registrations().front();
  EXPECT_EQ(registration.agent_id(), "cpu-test-agent");
  ASSERT_EQ(registration.devices_size(), 1);
  EXPECT_EQ(registration.devices(0).kind(), "cpu");
  EXPECT_TRUE(registration.devices(0).properties().contains("cpu_model"));
  // The agent counts the registration when AgentRegistered arrives, before
  // its first heartbeat.
  ASSERT_TRUE(daemon.waitFor([&] { return daemon.heartbeats() >= 1; }));
  EXPECT_EQ(session->registrations(), 1);
}

TEST_F(AgentSessionTest, RefusesTasksTheDaemonsKeyDidNotSign) {
  // The key comes from the registration (no --task-verify-key here).
  daemon.signTasks = false;
  ASSERT_TRUE(daemon.sendTask(axpyTask(8, "unsigned")));
  v1::TaskResult result = resultOf("unsigned");
  EXPECT_EQ(result.code(),
            static_cast<int>(absl::StatusCode::kPermissionDenied))
      << result.message();
  daemon.signTasks = true;
  ASSERT_TRUE(daemon.sendTask(axpyTask(8, "signed")));
  EXPECT_EQ(resultOf("signed").code(), 0);
}

TEST_F(AgentSessionTest, SendsHeartbeatsAtTheDaemonsInterval) {
  ASSERT_TRUE(daemon.waitFor([&] { return daemon.heartbeats() >= 3; }));
}

TEST_F(AgentSessionTest, RunsATaskFetchingTheArtifactAndReturnsOutputs) {
  v1::Task task = axpyTask(1000, "task-1");
  ASSERT_TRUE(daemon.sendTask(task));
  v1::TaskResult result = resultOf("task-1");
  ASSERT_EQ(result.code(), 0) << result.message();
  ASSERT_EQ(result.outputs_size(), 1);
  EXPECT_TRUE(sameType(result.outputs(0).type(),
                       task.record().manifest().outputs(0).type()));
  expectAxpy(result.outputs(0).data(), 1000);
  EXPECT_GE(daemon.blobReads(), 2) << "artifact and parameter were fetched";
  EXPECT_GT(result.timings().load_us(), 0);

  // The same executable again: loaded and resident, nothing fetched.
  int reads = daemon.blobReads();
  task.set_task_id("task-2");
  ASSERT_TRUE(daemon.sendTask(task));
  v1::TaskResult second = resultOf("task-2");
  ASSERT_EQ(second.code(), 0) << second.message();
  expectAxpy(second.outputs(0).data(), 1000);
  EXPECT_EQ(second.timings().load_us(), 0);
  EXPECT_EQ(daemon.blobReads(), reads);
}

TEST_F(AgentSessionTest, UploadsLargeOutputsWithBlobsWrite) {
  constexpr int kN = 1 << 20; // 4 MiB of f32: over the 3 MiB inline limit.
  v1::Task task = axpyTask(kN, "big");
  ASSERT_TRUE(daemon.sendTask(task));
  v1::TaskResult result = resultOf("big");
  ASSERT_EQ(result.code(), 0) << result.message();
  ASSERT_EQ(result.outputs(0).payload_case(), v1::Tensor::kBlob);
  EXPECT_EQ(daemon.blobWrites(), 1);
  expectAxpy(daemon.blob(result.outputs(0).blob().hash()), kN);
}

TEST_F(AgentSessionTest, AFailingTaskBecomesAnErrorResult) {
  v1::Task task = axpyTask(16, "bad");
  *task.mutable_record()->mutable_artifact() = digestOf("never uploaded");
  ASSERT_TRUE(daemon.sendTask(task));
  v1::TaskResult result = resultOf("bad");
  EXPECT_EQ(result.code(), static_cast<int>(absl::StatusCode::kNotFound));
  EXPECT_NE(result.message().find("artifact"), std::string::npos)
      << result.message();
  // The agent is still serving.
  ASSERT_TRUE(daemon.sendTask(axpyTask(16, "good")));
  EXPECT_EQ(resultOf("good").code(), 0);
}

/// A cpu backend that offers two devices (both the host).
class TwoDeviceCpuBackend final : public CpuBackend {
public:
  absl::StatusOr<std::vector<v1::Device>> describeDevices() override {
    auto devices = CpuBackend::describeDevices();
    if (devices.ok())
      devices->push_back(devices->front());
    return devices;
  }
};

TEST(AgentSessionDevicesTest, EveryDeviceCanRunATaskAtOnce) {
  // --task-threads 1, but two devices: the session runs one task per device
  // at once. Task "wait" spins until task "open" creates the gate file; with
  // a single worker "open" would queue behind "wait" forever.
  TempDir dir;
  FakeDaemon daemon{20};
  TwoDeviceCpuBackend backend;
  AgentOptions options;
  options.daemonAddress = daemon.address();
  options.agentId = "two";
  options.cacheDir = dir.path() / "cache";
  options.taskThreads = 1;
  auto session = AgentSession::create(options, backend);
  ASSERT_TRUE(session.ok()) << session.status();
  absl::Status runStatus;
  std::thread runner([&] { runStatus = (*session)->run(); });

  std::filesystem::path gate = dir.path() / "gate";
  auto task = [&](const std::string &id, const std::string &device,
                  const std::string &body) {
    auto path = test::compileSharedObject(
        dir.path(), id,
        absl::StrCat("#include <stdio.h>\n#include <unistd.h>\n"
                     "void kiln_invoke(void **b) {\n", body,
                     "\n  float *out = (float *)b[2];\n"
                     "  for (int i = 0; i < 8; ++i) out[i] = 1.0f;\n}\n"));
    EXPECT_TRUE(path.ok()) << path.status();
    std::string artifact = test::readFileBytes(*path);
    daemon.addBlob(artifact);
    v1::Task t;
    t.set_task_id(id);
    t.set_device_id(device);
    *t.mutable_record() = test::axpyRecord(8, artifact);
    *t.mutable_executable() = digestOf(t.record().SerializeAsString());
    *t.add_parameters() = daemon.addBlob(test::floatBytes(std::vector<float>(8)));
    v1::Tensor *input = t.add_inputs();
    *input->mutable_type() = t.record().manifest().inputs(0).type();
    input->set_data(test::floatBytes(std::vector<float>(8)));
    return t;
  };
  v1::Task wait = task("wait", "two/0",
                       absl::StrCat("  for (int i = 0; i < 20000 && access(\"",
                                    gate.string(), "\", F_OK) != 0; ++i)\n"
                                    "    usleep(1000);"));
  v1::Task open = task("open", "two/1",
                       absl::StrCat("  fclose(fopen(\"", gate.string(), "\", \"w\"));"));
  ASSERT_TRUE(daemon.waitFor([&] { return !daemon.registrations().empty(); }));
  ASSERT_EQ(daemon.registrations().front().devices_size(), 2);
  ASSERT_TRUE(daemon.sendTask(wait));
  ASSERT_TRUE(daemon.sendTask(open));
  // Both finish well before "wait" would give up on the gate (20 s).
  auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(daemon.waitFor([&] { return daemon.results().size() == 2; }));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  for (const v1::TaskResult &result : daemon.results())
    EXPECT_EQ(result.code(), 0) << result.message();
  (*session)->stop();
  runner.join();
  EXPECT_TRUE(runStatus.ok()) << runStatus;
}

TEST_F(AgentSessionTest, HeartbeatsContinueWhileATaskRuns) {
  // The kernel spins until a gate file exists, like a long inference.
  std::filesystem::path gate = dir.path() / "gate";
  std::string source = absl::StrCat(R"(
#include <unistd.h>
void kiln_invoke(void **b) {
  while (access(")",
                                    gate.string(), R"(", F_OK) != 0)
    usleep(1000);
  const float *a = (const float *)b[0];
  const float *x = (const float *)b[1];
  float *out = (float *)b[2];
  for (int i = 0; i < 8; ++i)
    out[i] = a[i] + 2.0f * x[i];
}
)");
  v1::Task task = axpyTask(8, "slow", source);
  ASSERT_TRUE(daemon.waitFor([&] { return !daemon.registrations().empty(); }));
  ASSERT_TRUE(daemon.sendTask(task));
  int before = daemon.heartbeats();
  ASSERT_TRUE(daemon.waitFor([&] { return daemon.heartbeats() >= before + 3; }));
  EXPECT_TRUE(daemon.results().empty()) << "the task cannot finish yet";
  std::ofstream(gate) << "go";
  v1::TaskResult result = resultOf("slow");
  ASSERT_EQ(result.code(), 0) << result.message();
  expectAxpy(result.outputs(0).data(), 8);
}

TEST_F(AgentSessionTest, ReconnectsWhenTheDaemonDropsTheStream) {
  ASSERT_TRUE(daemon.waitFor([&] { return daemon.registrations().size() == 1; }));
  daemon.dropConnection();
  ASSERT_TRUE(daemon.waitFor([&] { return daemon.registrations().size() == 2; }));
  // Both registrations speak this build's protocol; the second proves it is
  // the same agent with the token the first one was given.
  std::vector<v1::RegisterAgent> registrations = daemon.registrations();
  EXPECT_EQ(registrations[0].protocol_version(), kAgentProtocolVersion);
  EXPECT_EQ(registrations[1].protocol_version(), kAgentProtocolVersion);
  EXPECT_EQ(registrations[0].session_token(), "");
  EXPECT_EQ(registrations[1].session_token(), "token-1");
  // The new stream carries tasks too.
  ASSERT_TRUE(daemon.sendTask(axpyTask(4, "after-reconnect")));
  EXPECT_EQ(resultOf("after-reconnect").code(), 0);
}

TEST(AgentSessionStartTest, StopEndsRunWhileTheDaemonIsUnreachable) {
  TempDir dir;
  CpuBackend backend;
  AgentOptions options;
  // A port nobody listens on: take one from a server, then shut it down.
  {
    FakeDaemon closed(1000);
    options.daemonAddress = closed.address();
  }
  options.agentId = "cpu-lonely";
  options.cacheDir = dir.path() / "cache";
  options.initialBackoff = std::chrono::milliseconds(1);
  auto session = AgentSession::create(options, backend);
  ASSERT_TRUE(session.ok()) << session.status();
  absl::Status status = absl::UnknownError("not run");
  std::thread runner([&] { status = (*session)->run(); });
  (*session)->stop();
  runner.join();
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ((*session)->registrations(), 0);
}

TEST(AgentSessionStartTest, CreateRefusesAMissingDaemonAddress) {
  TempDir dir;
  CpuBackend backend;
  AgentOptions options;
  options.agentId = "x";
  options.cacheDir = dir.path();
  EXPECT_EQ(AgentSession::create(options, backend).status().code(),
            absl::StatusCode::kInvalidArgument);
}

} // namespace
} // namespace kiln::agent
