//===- StreamAgentLink.h - tasks on a remote agent's Connect stream -*- C++ -*-===//
//
// This file declares StreamAgentLink, the AgentLink of an agent that gets
// its tasks on its Agent.Connect stream (a remote agent; kilnd's own agents
// get theirs over their local link). gRPC's sync stream allows one Write at
// a time and gives it no deadline: a Write blocks while the agent's flow-
// control window is full, which for an agent that stops reading (stuck,
// stopped) is until its stream ends. So writes happen on a writer thread,
// in the order they were sent, and a caller waits for its own until its
// deadline only:
//  - a task the writer has not begun by then, because it was writing an
//    earlier one, is withdrawn, never written: DEADLINE_EXCEEDED, and the
//    stream is as it was (an idle writer begins a task at once, however
//    little time it has left);
//  - a task whose Write has begun is finished by the writer (a message
//    cannot be taken back): send() returns OK, and the call's await ends
//    at its deadline.
// The writer starts with the first task (an agent kilnd started never gets
// one here). detach() ends the link when its Connect handler returns: the
// tasks still queued fail with UNAVAILABLE, a Write in progress is
// cancelled with the call, and the writer is joined, so that nothing
// touches the stream after it is gone.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/sched/AgentConnection.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace kiln::server {

class StreamAgentLink final : public AgentLink {
public:
  /// Writes one message on the stream; false when the stream is gone.
  using WriteFn = std::function<bool(const v1::DaemonMessage &)>;
  /// Cancels the stream's call, so that a Write blocked in it returns.
  using CancelFn = std::function<void()>;

  StreamAgentLink(WriteFn write, CancelFn cancel);
  /// Detaches (see detach()) if the handler has not.
  ~StreamAgentLink() override;

  /// Queues `task`, completed by `record`, for the writer and waits until
  /// its Write ends or `deadline` passes (the file comment says what
  /// follows then). UNAVAILABLE for file inputs (a stream takes messages
  /// only), after detach(), or when the Write failed.
  absl::Status send(const v1::Task &task, const TaskRecord &record,
                    const TensorFiles &inputFiles, const LinkExtras &extras,
                    std::chrono::steady_clock::time_point deadline) override;

  /// Runs `registerAgent` and, if it succeeds, writes `greeting`, all under
  /// the link's lock: no task can be queued before the agent's Registered
  /// is written. Returns the registration's status; a failed write shows
  /// up as the end of the stream on the handler's next Read.
  absl::Status greet(const v1::DaemonMessage &greeting,
                     const std::function<absl::Status()> &registerAgent);

  /// Ends the link: later sends and the tasks still queued fail, a Write in
  /// progress is cancelled, and the writer is joined.
  void detach();

  /// Tasks waiting for the writer (not begun).
  size_t queuedTasks();

private:
  using Clock = std::chrono::steady_clock;
  enum class Stage { Queued, Writing, Written, Failed };
  struct Outgoing {
    v1::DaemonMessage message;
    Stage stage = Stage::Queued;
  };

  void writeLoop();
  /// Waits on `changed` until `done` holds or `deadline` passes (no
  /// deadline: until `done`).
  bool waitUntil(std::unique_lock<std::mutex> &lock,
                 std::chrono::steady_clock::time_point deadline,
                 const std::function<bool()> &done);

  WriteFn write;
  CancelFn cancel;
  std::mutex mutex;
  std::condition_variable changed; // a stage, the queue or `detached`
  std::deque<std::shared_ptr<Outgoing>> queue; // guarded by mutex
  bool writing = false;                        // guarded by mutex
  bool detached = false;                       // guarded by mutex
  std::thread writer;                          // started under mutex
};

} // namespace kiln::server
