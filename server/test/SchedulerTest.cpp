//===- SchedulerTest.cpp - device choice, waits, deadlines, agent loss ----===//
//
// This file implements tests for DeviceRegistry and Scheduler against
// in-process fake agents; results are delivered through the same
// AgentConnection calls the gRPC AgentService makes.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/sched/Scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <future>

#include <sys/mman.h>

namespace kiln::server {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/// The agent side of a session: records the tasks it is sent.
class FakeAgentLink : public AgentLink {
public:
  absl::Status send(const v1::Task &task, const TaskRecord &record,
                    const TensorFiles &files, const LinkExtras &,
                    Clock::time_point) override {
    std::lock_guard<std::mutex> lock(mutex);
    ++sends;
    if (stuck)
      return absl::DeadlineExceededError("the peer took none of the frame");
    if (broken || (!files.empty() && !local))
      return absl::UnavailableError("stream closed");
    filesSent += files.size();
    tasks.push_back(task);
    record.fill(tasks.back());
    arrived.notify_all();
    return absl::OkStatus();
  }

  /// Blocks until a task arrives (or `wait` passes: nullopt).
  std::optional<v1::Task> nextTask(std::chrono::milliseconds wait = 10s) {
    std::unique_lock<std::mutex> lock(mutex);
    if (!arrived.wait_for(lock, wait, [this] { return !tasks.empty(); }))
      return std::nullopt;
    v1::Task task = tasks.front();
    tasks.pop_front();
    return task;
  }

  bool passesFiles() const override { return local; }

  std::mutex mutex;
  std::condition_variable arrived;
  std::deque<v1::Task> tasks;
  bool broken = false;
  bool stuck = false;     // takes no task before the deadline
  int sends = 0;          // send() calls, guarded by mutex
  bool local = false;     // a local link passes files
  size_t filesSent = 0;   // guarded by mutex
};

struct FakeAgent {
  std::shared_ptr<FakeAgentLink> link = std::make_shared<FakeAgentLink>();
  std::shared_ptr<AgentConnection> session;
  std::string token; // its session token
};

/// The record of an executable whose manifest lists `features`.
TaskRecord recordWith(const std::string &features) {
  auto record = std::make_shared<v1::ExecutableRecord>();
  record->mutable_manifest()->set_features(features);
  return TaskRecord(std::move(record), "signature");
}

/// For tasks whose record the scheduler need not read.
const TaskRecord kNoRecord = recordWith("");

v1::TaskResult resultFor(const v1::Task &task) {
  v1::TaskResult result;
  result.set_task_id(task.task_id());
  result.mutable_timings()->set_run_us(5);
  return result;
}

class SchedulerTest : public ::testing::Test {
protected:
  FakeAgent connect(const std::string &agentId, int devices,
                    const std::string &kind = "cpu",
                    const std::string &token = "") {
    FakeAgent agent;
    agent.session = std::make_shared<AgentConnection>(agentId, agent.link);
    std::vector<v1::Device> list(devices);
    for (v1::Device &device : list)
      device.set_kind(kind);
    absl::StatusOr<std::string> issued =
        registry.addAgent(agent.session, list, token);
    EXPECT_TRUE(issued.ok()) << issued.status();
    agent.token = issued.value_or("");
    return agent;
  }

  std::future<absl::StatusOr<ScheduledResult>>
  runAsync(Clock::duration timeout = 30s) {
    return std::async(std::launch::async, [this, timeout] {
      return scheduler.run("cpu", v1::Task(), kNoRecord, Clock::now() + timeout);
    });
  }

  int depthOf(const std::string &deviceId) {
    for (const v1::Device &device : registry.listDevices(""))
      if (device.id() == deviceId)
        return device.queue_depth();
    return -1;
  }

  DeviceRegistry registry{100ms};
  Scheduler scheduler{registry, 5s};
};

TEST_F(SchedulerTest, RegistersDevicesUnderAgentId) {
  connect("gpu-box", 2, "acap");
  connect("cpu-box", 1, "cpu");
  std::vector<v1::Device> all = registry.listDevices("");
  ASSERT_EQ(all.size(), 3u);
  std::vector<v1::Device> acap = registry.listDevices("acap");
  ASSERT_EQ(acap.size(), 2u);
  EXPECT_EQ(acap[0].id(), "gpu-box/0");
  EXPECT_EQ(acap[1].id(), "gpu-box/1");
  EXPECT_EQ(acap[0].agent_id(), "gpu-box");
  EXPECT_EQ(acap[0].state(), v1::DEVICE_STATE_READY);
}

TEST_F(SchedulerTest, FileInputsGoAsFilesOnlyOverALinkThatPassesThem) {
  auto memfd = [] {
    return UniqueFd(::memfd_create("t", MFD_CLOEXEC));
  };
  auto runWithFile = [&](int &stored) {
    return std::async(std::launch::async, [&, this] {
      v1::Task task;
      task.add_inputs();
      FileInputs files;
      files.files.emplace_back(0, memfd());
      files.storeAsBlobs = [&stored](v1::Task &sent, const TensorFiles &given) {
        ++stored;
        EXPECT_EQ(given.size(), 1u);
        sent.mutable_inputs(0)->mutable_blob()->set_hash("stored");
        return absl::OkStatus();
      };
      return scheduler.run("cpu", task, kNoRecord, Clock::now() + 30s, &files);
    });
  };
  // A remote agent (its gRPC stream): the file becomes a blob first.
  FakeAgent remote = connect("remote", 1);
  int stored = 0;
  auto run = runWithFile(stored);
  std::optional<v1::Task> task = remote.link->nextTask();
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->inputs(0).blob().hash(), "stored");
  ASSERT_TRUE(remote.session->complete(resultFor(*task)));
  ASSERT_TRUE(run.get().ok());
  EXPECT_EQ(stored, 1);
  EXPECT_EQ(remote.link->filesSent, 0u);
  registry.removeAgent(remote.session, absl::UnavailableError("gone"));

  // A local link: the file goes as it is, nothing is stored.
  FakeAgent local = connect("local", 1);
  local.link->local = true;
  stored = 0;
  run = runWithFile(stored);
  task = local.link->nextTask();
  ASSERT_TRUE(task.has_value());
  EXPECT_FALSE(task->inputs(0).has_blob());
  ASSERT_TRUE(local.session->complete(resultFor(*task)));
  ASSERT_TRUE(run.get().ok());
  EXPECT_EQ(stored, 0);
  EXPECT_EQ(local.link->filesSent, 1u);
}

TEST_F(SchedulerTest, RejectsBadRegistrations) {
  auto link = std::make_shared<FakeAgentLink>();
  auto nameless = std::make_shared<AgentConnection>("", link);
  EXPECT_EQ(registry.addAgent(nameless, {v1::Device()}).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto empty = std::make_shared<AgentConnection>("a", link);
  EXPECT_EQ(registry.addAgent(empty, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  v1::Device kindless;
  EXPECT_EQ(registry.addAgent(empty, {kindless}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(SchedulerTest, ALiveAgentsIdIsNotTakenOverWithoutItsToken) {
  auto honest = std::make_shared<FakeAgentLink>();
  auto session = std::make_shared<AgentConnection>("box", honest);
  v1::Device device;
  device.set_kind("cpu");
  absl::StatusOr<std::string> token = registry.addAgent(session, {device});
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(token->size(), 32u) << "128 random bits, hex";

  // A second process with the same id, with no token or a guessed one.
  auto rogue = std::make_shared<FakeAgentLink>();
  for (std::string guess : {std::string(), std::string("0123"), *token + "x"}) {
    auto impostor = std::make_shared<AgentConnection>("box", rogue);
    absl::StatusOr<std::string> refused =
        registry.addAgent(impostor, {device}, guess);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kAlreadyExists)
        << "token '" << guess << "'";
    EXPECT_NE(refused.status().message().find("'box'"), std::string::npos);
  }
  // The live agent still gets the work.
  auto run = runAsync();
  std::optional<v1::Task> task = honest->nextTask();
  ASSERT_TRUE(task.has_value());
  EXPECT_TRUE(rogue->tasks.empty());
  ASSERT_TRUE(session->complete(resultFor(*task)));
  ASSERT_TRUE(run.get().ok());

  // The agent itself, reconnecting with its token, replaces its session and
  // gets a new token.
  auto reconnected = std::make_shared<AgentConnection>("box", honest);
  absl::StatusOr<std::string> again =
      registry.addAgent(reconnected, {device}, *token);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_NE(*again, *token);
  // Once it is gone, its id is free to register (a restarted agent).
  registry.removeAgent(reconnected, absl::UnavailableError("gone"));
  EXPECT_TRUE(registry.addAgent(std::make_shared<AgentConnection>("box", rogue),
                                {device})
                  .ok());
}

TEST_F(SchedulerTest, PicksTheLeastLoadedReadyDevice) {
  FakeAgent agent = connect("a", 2);
  auto first = runAsync();
  std::optional<v1::Task> firstTask = agent.link->nextTask();
  ASSERT_TRUE(firstTask);
  EXPECT_EQ(firstTask->device_id(), "a/0");
  EXPECT_EQ(depthOf("a/0"), 1);
  auto second = runAsync();
  std::optional<v1::Task> secondTask = agent.link->nextTask();
  ASSERT_TRUE(secondTask);
  EXPECT_EQ(secondTask->device_id(), "a/1");
  EXPECT_NE(firstTask->task_id(), secondTask->task_id());

  ASSERT_TRUE(agent.session->complete(resultFor(*secondTask)));
  absl::StatusOr<ScheduledResult> secondResult = second.get();
  ASSERT_TRUE(secondResult.ok()) << secondResult.status();
  EXPECT_EQ(secondResult->deviceId, "a/1");
  EXPECT_EQ(depthOf("a/1"), 0);
  // a/0 still holds a task, so the next one goes to a/1 again.
  auto third = runAsync();
  std::optional<v1::Task> thirdTask = agent.link->nextTask();
  ASSERT_TRUE(thirdTask);
  EXPECT_EQ(thirdTask->device_id(), "a/1");
  ASSERT_TRUE(agent.session->complete(resultFor(*firstTask)));
  ASSERT_TRUE(agent.session->complete(resultFor(*thirdTask)));
  EXPECT_TRUE(first.get().ok());
  EXPECT_TRUE(third.get().ok());
  EXPECT_EQ(depthOf("a/0"), 0);
}

TEST_F(SchedulerTest, APinnedTaskRunsOnItsDeviceAndCarriesItsReleases) {
  FakeAgent agent = connect("a", 2);
  HeldTensorIndex held;
  v1::TensorType type;
  held.add("held-1", "a/1", "cpu", type);
  held.add("held-2", "a/0", "cpu", type);
  held.release("held-1");
  held.release("held-2");
  // a/0 is idle and first, but the task's held inputs are on a/1.
  auto run = std::async(std::launch::async, [&] {
    return scheduler.run("cpu", v1::Task(), kNoRecord, Clock::now() + 30s, nullptr, "a/1",
                         &held);
  });
  std::optional<v1::Task> sent = agent.link->nextTask();
  ASSERT_TRUE(sent);
  EXPECT_EQ(sent->device_id(), "a/1");
  ASSERT_EQ(sent->release_size(), 1) << "only a/1's release goes with it";
  EXPECT_EQ(sent->release(0), "held-1");
  agent.session->complete(resultFor(*sent));
  ASSERT_TRUE(run.get().ok());
  EXPECT_EQ(held.size(), 0u);
  EXPECT_EQ(held.find("held-1").status().code(),
            absl::StatusCode::kFailedPrecondition);

  // A task that could not be sent gives its releases back to the queue.
  held.add("held-3", "a/1", "cpu", type);
  held.release("held-3");
  agent.link->broken = true;
  absl::StatusOr<ScheduledResult> unsent = scheduler.run(
      "cpu", v1::Task(), kNoRecord, Clock::now() + 30s, nullptr, "a/1", &held);
  EXPECT_FALSE(unsent.ok());
  v1::Task later;
  held.takeReleases("a/1", later);
  ASSERT_EQ(later.release_size(), 1);
  EXPECT_EQ(later.release(0), "held-3");

  // A device that is gone fails at once: what it held is gone with it.
  Clock::time_point start = Clock::now();
  absl::StatusOr<ScheduledResult> gone = scheduler.run(
      "cpu", v1::Task(), kNoRecord, Clock::now() + 30s, nullptr, "b/0", &held);
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(gone.status().message()),
              ::testing::HasSubstr("device b/0, which holds the call's held inputs"));
  EXPECT_LT(Clock::now() - start, 2s);
}

TEST_F(SchedulerTest, RunsCodeOnlyOnDevicesWithItsCpuFeatures) {
  auto connectCpu = [&](const std::string &agentId,
                        const std::string &features) {
    FakeAgent agent;
    agent.session = std::make_shared<AgentConnection>(agentId, agent.link);
    v1::Device device;
    device.set_kind("cpu");
    (*device.mutable_properties())["cpu"] = agentId;
    (*device.mutable_properties())["cpu_features"] = features;
    EXPECT_TRUE(registry.addAgent(agent.session, {device}).ok());
    return agent;
  };
  FakeAgent small = connectCpu("small", "avx,sse4.2");
  FakeAgent big = connectCpu("big", "avx,avx2,avx512f,fma,sse4.2");
  v1::Task task;
  TaskRecord fitting = recordWith("+avx2,+fma");
  // Only "big" has avx2 and fma, though "small" sorts first and is idle.
  for (int i = 0; i < 2; ++i) {
    auto run = std::async(std::launch::async, [&] {
      return scheduler.run("cpu", task, fitting, Clock::now() + 30s);
    });
    std::optional<v1::Task> sent = big.link->nextTask();
    ASSERT_TRUE(sent);
    EXPECT_EQ(sent->device_id(), "big/0");
    big.session->complete(resultFor(*sent));
    ASSERT_TRUE(run.get().ok());
  }
  EXPECT_TRUE(small.link->tasks.empty());
  // Code no device can run fails at once, naming what is missing.
  TaskRecord unfit = recordWith("+amx-tile,+avx2");
  Clock::time_point start = Clock::now();
  absl::StatusOr<ScheduledResult> refused =
      scheduler.run("cpu", task, unfit, Clock::now() + 30s);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()),
              ::testing::HasSubstr("amx-tile"));
  EXPECT_LT(Clock::now() - start, 2s);
}

TEST_F(SchedulerTest, NoDeviceIsUnavailableAfterTheWait) {
  Scheduler impatient(registry, 50ms);
  connect("riscv-box", 1, "riscv64");
  Clock::time_point start = Clock::now();
  absl::StatusOr<ScheduledResult> result =
      impatient.run("cpu", v1::Task(), kNoRecord, Clock::now() + 30s);
  EXPECT_GE(Clock::now() - start, 50ms);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(result.status().message(),
            "no device of kind 'cpu' is registered");
}

TEST_F(SchedulerTest, AKindNoAgentServesFailsAtOnceAfterStartup) {
  // kilnd starts a cpu agent itself, which has registered; nothing serves
  // riscv64.
  registry.expectAgents({"local-cpu"}, 0ms);
  connect("local-cpu", 1, "cpu");
  Clock::time_point start = Clock::now();
  absl::StatusOr<ScheduledResult> result =
      scheduler.run("riscv64", v1::Task(), kNoRecord, Clock::now() + 30s);
  EXPECT_LT(Clock::now() - start, 1s) << "did not wait out the 5 s device wait";
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(result.status().message(),
            "no agent serving device kind 'riscv64' has connected to this "
            "kilnd (kinds it has: cpu)");
}

TEST_F(SchedulerTest, AKindSeenBeforeOrPossiblyOnItsWayIsWaitedFor) {
  // A local agent (the qemu one, whose devices are riscv64) still starting:
  // any kind is waited for, since it may serve it.
  registry.expectAgents({"local-cpu", "local-qemu"}, 0ms);
  FakeAgent cpu = connect("local-cpu", 1, "cpu");
  Scheduler patient(registry, 200ms);
  Clock::time_point start = Clock::now();
  absl::StatusOr<ScheduledResult> expected =
      patient.run("riscv64", v1::Task(), kNoRecord, Clock::now() + 30s);
  EXPECT_GE(Clock::now() - start, 200ms);
  EXPECT_EQ(expected.status().message(),
            "no device of kind 'riscv64' is registered");
  // Every local agent registered: a kind seen before (an agent that went
  // away and may come back) is still waited for; one never seen is not.
  FakeAgent qemu = connect("local-qemu", 1, "riscv64");
  FakeAgent gone = connect("gone", 1, "mdla");
  registry.removeAgent(gone.session, absl::UnavailableError("bye"));
  start = Clock::now();
  absl::StatusOr<ScheduledResult> seen =
      patient.run("mdla", v1::Task(), kNoRecord, Clock::now() + 30s);
  EXPECT_GE(Clock::now() - start, 200ms);
  EXPECT_EQ(seen.status().code(), absl::StatusCode::kUnavailable);
  start = Clock::now();
  absl::StatusOr<ScheduledResult> never =
      patient.run("acap", v1::Task(), kNoRecord, Clock::now() + 30s);
  EXPECT_LT(Clock::now() - start, 150ms);
  EXPECT_EQ(never.status().message(),
            "no agent serving device kind 'acap' has connected to this kilnd "
            "(kinds it has: cpu, riscv64)");
}

TEST_F(SchedulerTest, UnknownKindsAreWaitedForDuringStartup) {
  // Remote agents get the startup grace to connect.
  registry.expectAgents({}, 10s);
  auto pending = runAsync();
  FakeAgent late = connect("late", 1);
  std::optional<v1::Task> task = late.link->nextTask();
  ASSERT_TRUE(task);
  ASSERT_TRUE(late.session->complete(resultFor(*task)));
  EXPECT_TRUE(pending.get().ok());
}

TEST_F(SchedulerTest, WaitsForADeviceToRegister) {
  auto pending = runAsync();
  FakeAgent late = connect("late", 1);
  std::optional<v1::Task> task = late.link->nextTask();
  ASSERT_TRUE(task);
  ASSERT_TRUE(late.session->complete(resultFor(*task)));
  absl::StatusOr<ScheduledResult> result = pending.get();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->deviceId, "late/0");
  EXPECT_EQ(result->result.timings().run_us(), 5);
}

TEST_F(SchedulerTest, AgentLossRetriesOnAnotherDevice) {
  FakeAgent a = connect("a", 1);
  FakeAgent b = connect("b", 1);
  auto pending = runAsync();
  std::optional<v1::Task> lostTask = a.link->nextTask();
  ASSERT_TRUE(lostTask);
  EXPECT_EQ(lostTask->device_id(), "a/0");
  registry.removeAgent(a.session, absl::UnavailableError("a crashed"));
  std::optional<v1::Task> retried = b.link->nextTask();
  ASSERT_TRUE(retried);
  EXPECT_EQ(retried->device_id(), "b/0");
  EXPECT_NE(retried->task_id(), lostTask->task_id());
  ASSERT_TRUE(b.session->complete(resultFor(*retried)));
  absl::StatusOr<ScheduledResult> result = pending.get();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->deviceId, "b/0");
  EXPECT_EQ(registry.listDevices("").size(), 1u);
}

TEST_F(SchedulerTest, AgentLossWithNoOtherDeviceIsUnavailable) {
  FakeAgent a = connect("a", 1);
  auto pending = runAsync();
  ASSERT_TRUE(a.link->nextTask());
  registry.removeAgent(a.session, absl::UnavailableError("a crashed"));
  absl::StatusOr<ScheduledResult> result = pending.get();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(result.status().message().find("a crashed"),
            absl::string_view::npos);
  EXPECT_TRUE(registry.listDevices("").empty());
}

TEST_F(SchedulerTest, BrokenStreamIsRetriedElsewhere) {
  FakeAgent a = connect("a", 1);
  FakeAgent b = connect("b", 1);
  a.link->broken = true;
  auto pending = runAsync();
  std::optional<v1::Task> task = b.link->nextTask();
  ASSERT_TRUE(task);
  ASSERT_TRUE(b.session->complete(resultFor(*task)));
  EXPECT_TRUE(pending.get().ok());
}

TEST_F(SchedulerTest, ATaskTheAgentDoesNotTakeByTheDeadlineEndsTheCall) {
  // Not a lost agent: the call's time is up, so no retry elsewhere.
  FakeAgent a = connect("a", 1);
  FakeAgent b = connect("b", 1);
  a.link->stuck = true;
  b.link->stuck = true;
  absl::StatusOr<ScheduledResult> result =
      scheduler.run("cpu", v1::Task(), kNoRecord, Clock::now() + 50ms);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(result.status().message().find("did not take task"),
            absl::string_view::npos)
      << result.status();
  EXPECT_EQ(a.link->sends + b.link->sends, 1) << "retried on another device";
  EXPECT_EQ(a.session->pendingCount() + b.session->pendingCount(), 0u);
  EXPECT_EQ(depthOf("a/0") + depthOf("b/0"), 0);
  // Both devices stay in service: the next call runs.
  a.link->stuck = b.link->stuck = false;
  auto pending = runAsync();
  std::optional<v1::Task> task;
  FakeAgent *ran = nullptr;
  for (auto until = Clock::now() + 10s; !ran && Clock::now() < until;)
    for (FakeAgent *agent : {&a, &b})
      if (!ran && (task = agent->link->nextTask(10ms)))
        ran = agent;
  ASSERT_TRUE(ran);
  ASSERT_TRUE(ran->session->complete(resultFor(*task)));
  EXPECT_TRUE(pending.get().ok());
}

TEST_F(SchedulerTest, AnAgentThatTookNoTaskIsPassedOverUntilItHeartbeats) {
  // Ties on queue depth go to the first device by id: "a/0".
  FakeAgent a = connect("a", 2);
  FakeAgent b = connect("b", 1);
  a.link->stuck = true;
  absl::StatusOr<ScheduledResult> missed =
      scheduler.run("cpu", v1::Task(), kNoRecord, Clock::now() + Scheduler::kStallEvidence + 300ms);
  ASSERT_EQ(missed.status().code(), absl::StatusCode::kDeadlineExceeded) << missed.status();
  ASSERT_EQ(a.link->sends, 1);
  // Both of a's devices are behind b's now, idle as they are: the next
  // calls run on b, queueing there (before, each went to a and missed its
  // deadline).
  for (int call = 0; call < 3; ++call) {
    auto pending = runAsync();
    std::optional<v1::Task> task = b.link->nextTask();
    ASSERT_TRUE(task) << "call " << call << " did not go to b";
    ASSERT_TRUE(b.session->complete(resultFor(*task)));
    ASSERT_TRUE(pending.get().ok());
  }
  EXPECT_EQ(a.link->sends, 1);
  // A heartbeat puts a first again (the tie by id).
  a.link->stuck = false;
  registry.heartbeat(*a.session);
  {
    auto again = runAsync();
    std::optional<v1::Task> task = a.link->nextTask();
    ASSERT_TRUE(task) << "a heartbeat did not clear the stall";
    ASSERT_TRUE(a.session->complete(resultFor(*task)));
    EXPECT_TRUE(again.get().ok());
  }
  // Stalled again, and b gone: a's devices are taken rather than none.
  a.link->stuck = true;
  ASSERT_EQ(scheduler.run("cpu", v1::Task(), kNoRecord, Clock::now() + Scheduler::kStallEvidence + 300ms).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  registry.removeAgent(b.session, absl::UnavailableError("b left"));
  a.link->stuck = false;
  auto onlyA = runAsync();
  std::optional<v1::Task> task = a.link->nextTask();
  ASSERT_TRUE(task) << "a stalled device is taken when no other is there";
  ASSERT_TRUE(a.session->complete(resultFor(*task)));
  EXPECT_TRUE(onlyA.get().ok());
}

TEST_F(SchedulerTest, ACallWithLittleTimeLeftStallsNoAgent) {
  FakeAgent a = connect("a", 1);
  FakeAgent b = connect("b", 1);
  a.link->stuck = true;
  absl::StatusOr<ScheduledResult> missed =
      scheduler.run("cpu", v1::Task(), kNoRecord, Clock::now() + 10ms);
  ASSERT_EQ(missed.status().code(), absl::StatusCode::kDeadlineExceeded) << missed.status();
  ASSERT_EQ(a.link->sends, 1);
  // 10 ms says little about a: it is still first (the tie by id).
  a.link->stuck = false;
  auto next = runAsync();
  std::optional<v1::Task> task = a.link->nextTask();
  ASSERT_TRUE(task) << "a was stalled by a call that had 10 ms";
  ASSERT_TRUE(a.session->complete(resultFor(*task)));
  EXPECT_TRUE(next.get().ok());
}

TEST_F(SchedulerTest, SilentDeviceMissesTheDeadline) {
  FakeAgent a = connect("a", 1);
  absl::StatusOr<ScheduledResult> result =
      scheduler.run("cpu", v1::Task(), kNoRecord, Clock::now() + 50ms);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(a.session->pendingCount(), 0u);
  EXPECT_EQ(depthOf("a/0"), 0);
  // A late answer is ignored, not crashed on.
  std::optional<v1::Task> task = a.link->nextTask();
  ASSERT_TRUE(task);
  EXPECT_FALSE(a.session->complete(resultFor(*task)));
}

TEST_F(SchedulerTest, MissedHeartbeatsMakeDevicesUnhealthy) {
  FakeAgent a = connect("a", 1);
  registry.checkHeartbeats(Clock::now() + 250ms); // 2.5 intervals: fine
  EXPECT_EQ(registry.listDevices("")[0].state(), v1::DEVICE_STATE_READY);
  registry.checkHeartbeats(Clock::now() + 350ms); // > 3 intervals
  EXPECT_EQ(registry.listDevices("")[0].state(), v1::DEVICE_STATE_UNHEALTHY);
  Scheduler impatient(registry, 0ms);
  absl::StatusOr<ScheduledResult> result =
      impatient.run("cpu", v1::Task(), kNoRecord, Clock::now() + 30s);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(result.status().message().find("none READY"),
            absl::string_view::npos);
  registry.heartbeat(*a.session);
  EXPECT_EQ(registry.listDevices("")[0].state(), v1::DEVICE_STATE_READY);
}

TEST_F(SchedulerTest, ReconnectingAgentReplacesItsOldSession) {
  FakeAgent old = connect("a", 1);
  auto pending = runAsync();
  ASSERT_TRUE(old.link->nextTask());
  FakeAgent fresh = connect("a", 1, "cpu", old.token);
  EXPECT_TRUE(old.session->closed());
  // The in-flight task failed over to the new session's device.
  std::optional<v1::Task> retried = fresh.link->nextTask();
  ASSERT_TRUE(retried);
  ASSERT_TRUE(fresh.session->complete(resultFor(*retried)));
  EXPECT_TRUE(pending.get().ok());
  // Removing the stale session later does not remove the fresh devices.
  registry.removeAgent(old.session, absl::UnavailableError("old stream ended"));
  EXPECT_EQ(registry.listDevices("").size(), 1u);
}

} // namespace
} // namespace kiln::server
