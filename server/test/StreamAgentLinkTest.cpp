//===- StreamAgentLinkTest.cpp - tasks on a remote agent's stream ---------===//
//
// StreamAgentLink against a stream whose Write blocks while a test holds it
// (an agent that stops reading): callers get their deadlines, a task not
// begun is never written, the order is kept, and detach() fails what is
// queued and cancels the Write in progress.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/sched/StreamAgentLink.h"

#include "kiln/server/sched/TaskRecord.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::server {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/// A stream whose Write blocks while `held` (as a full flow-control
/// window holds a real one) until released or cancelled; it records the
/// task ids written.
class HeldStream {
public:
  bool write(const v1::DaemonMessage &message) {
    std::unique_lock<std::mutex> lock(mutex);
    ++started;
    changed.notify_all();
    changed.wait(lock, [this] { return !held || cancelled; });
    if (cancelled)
      return false;
    written.push_back(message.has_task() ? message.task().task_id() : "greeting");
    return true;
  }
  void hold(bool on) {
    std::lock_guard<std::mutex> lock(mutex);
    held = on;
    changed.notify_all();
  }
  void cancel() {
    std::lock_guard<std::mutex> lock(mutex);
    cancelled = true;
    changed.notify_all();
  }
  /// Waits until `count` Writes have begun.
  bool waitStarted(int count) {
    std::unique_lock<std::mutex> lock(mutex);
    return changed.wait_for(lock, 10s, [&] { return started >= count; });
  }
  std::vector<std::string> writtenIds() {
    std::lock_guard<std::mutex> lock(mutex);
    return written;
  }

private:
  std::mutex mutex;
  std::condition_variable changed;
  bool held = false, cancelled = false;
  int started = 0;
  std::vector<std::string> written;
};

class StreamAgentLinkTest : public testing::Test {
protected:
  HeldStream stream; // declared first: the link's destructor joins its writer before it goes
  StreamAgentLink link{[this](const v1::DaemonMessage &m) { return stream.write(m); },
                       [this] { stream.cancel(); }};

  static v1::Task task(const std::string &id) {
    v1::Task t;
    t.set_task_id(id);
    return t;
  }
  static TaskRecord record() {
    auto executable = std::make_shared<v1::ExecutableRecord>();
    executable->mutable_manifest()->set_entry_symbol("kiln_main");
    return TaskRecord(std::move(executable), "kilnd's signature");
  }
  absl::Status send(const std::string &id, Clock::time_point deadline) {
    return link.send(task(id), record(), {}, {}, deadline);
  }
};

TEST_F(StreamAgentLinkTest, WritesTasksInOrderWithTheirRecord) {
  ASSERT_TRUE(send("a", Clock::now() + 10s).ok());
  ASSERT_TRUE(send("b", Clock::time_point::max()).ok());
  EXPECT_EQ(stream.writtenIds(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(StreamAgentLinkTest, ACallerBehindAStuckWriteGetsItsDeadlineAndIsNeverWritten) {
  stream.hold(true);
  // The first task's Write begins and blocks: its caller returns OK at its
  // deadline (the writer finishes it), not when the agent reads again.
  auto started = Clock::now();
  EXPECT_TRUE(send("first", Clock::now() + 200ms).ok());
  EXPECT_GE(Clock::now() - started, 190ms);
  EXPECT_LT(Clock::now() - started, 5s);
  // The next waits behind it, then is withdrawn at its deadline.
  started = Clock::now();
  absl::Status second = send("second", Clock::now() + 200ms);
  EXPECT_TRUE(absl::IsDeadlineExceeded(second)) << second;
  EXPECT_NE(second.message().find("still writing an earlier task"), std::string::npos);
  EXPECT_LT(Clock::now() - started, 5s);
  // Once the agent reads, the first is written, the second never is, and
  // the link serves the next task.
  stream.hold(false);
  ASSERT_TRUE(send("third", Clock::now() + 10s).ok());
  EXPECT_EQ(stream.writtenIds(), (std::vector<std::string>{"first", "third"}));
}

TEST_F(StreamAgentLinkTest, AnIdleLinkWritesATaskWhoseDeadlineHasPassed) {
  // Not a stalled agent: nothing was ahead of the task. Its Write goes,
  // and the call's await, not the send, ends it.
  EXPECT_TRUE(send("late", Clock::now() - 1ms).ok());
  // send() returns once the Write has begun; it ends on the writer.
  for (auto until = Clock::now() + 10s; stream.writtenIds().empty() && Clock::now() < until;)
    std::this_thread::sleep_for(1ms);
  EXPECT_EQ(stream.writtenIds(), (std::vector<std::string>{"late"}));
}

TEST_F(StreamAgentLinkTest, DetachFailsQueuedTasksAndCancelsTheWriteInProgress) {
  stream.hold(true);
  auto first = std::async(std::launch::async, [&] { return send("first", Clock::time_point::max()); });
  ASSERT_TRUE(stream.waitStarted(1));
  auto second = std::async(std::launch::async, [&] { return send("second", Clock::time_point::max()); });
  // Without a deadline both wait; detach ends them (a handler whose stream
  // ended) and returns once the writer left the cancelled Write.
  for (auto until = Clock::now() + 10s; link.queuedTasks() == 0 && Clock::now() < until;)
    std::this_thread::sleep_for(1ms);
  ASSERT_EQ(link.queuedTasks(), 1u) << "the second task is not waiting behind the first";
  link.detach();
  ASSERT_EQ(first.wait_for(10s), std::future_status::ready);
  ASSERT_EQ(second.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(absl::IsUnavailable(first.get()));
  EXPECT_TRUE(absl::IsUnavailable(second.get()));
  EXPECT_TRUE(stream.writtenIds().empty());
  EXPECT_TRUE(absl::IsUnavailable(send("later", Clock::now() + 1s)));
}

TEST_F(StreamAgentLinkTest, TheGreetingGoesFirstAndOnlyAfterARegistration) {
  v1::DaemonMessage greeting;
  greeting.mutable_registered();
  EXPECT_TRUE(absl::IsPermissionDenied(
      link.greet(greeting, [] { return absl::PermissionDeniedError("not yours"); })));
  EXPECT_TRUE(stream.writtenIds().empty());
  ASSERT_TRUE(link.greet(greeting, [] { return absl::OkStatus(); }).ok());
  ASSERT_TRUE(send("a", Clock::now() + 10s).ok());
  EXPECT_EQ(stream.writtenIds(), (std::vector<std::string>{"greeting", "a"}));
}

TEST_F(StreamAgentLinkTest, FileInputsAreRefused) {
  TensorFiles files;
  files.emplace_back(0, UniqueFd());
  absl::Status sent = link.send(task("a"), record(), files, {}, Clock::now() + 1s);
  EXPECT_TRUE(absl::IsUnavailable(sent)) << sent;
  EXPECT_TRUE(stream.writtenIds().empty());
}

} // namespace
} // namespace kiln::server
