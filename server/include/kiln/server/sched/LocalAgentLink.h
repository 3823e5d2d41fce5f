//===- LocalAgentLink.h - kilnd's end of an agent's local link --*- C++ -*-===//
//
// This file declares LocalAgentLink, the AgentLink of an agent kilnd started
// itself: tasks go over a socketpair (FramedSocket) instead of the agent's
// Connect stream, with each blob input's store file passed alongside, and
// results come back the same way with large outputs in memfds, which kilnd
// stores as in-transit blobs. No tensor byte crosses gRPC or is fetched,
// uploaded or copied between the two processes. LocalLinks finds the link
// of an agent id.
//
// Answers are read by the threads that await them (await()): a caller
// that finds nobody reading reads the link itself, hands any other
// caller's answer over (its promise wakes that caller alone), and returns
// with its own, so a lone call wakes no thread but its own. A caller
// that finds the link read waits on its promise. The link counts the
// answers the agent still owes (one per task sent); whoever leaves the
// reading while some are owed, to waiting callers or to none (their
// deadlines passed), hands it to the watcher thread, which reads until
// none is. So answers are read whenever any is owed and the agent never
// blocks sending one; under many callers they are read as by a dedicated
// reader. The watcher also wakes when the agent hangs up, then reads what
// it sent before and fails the tasks still in flight.
//
// This holds because every task sent is awaited on the link (Scheduler
// awaits each it dispatches): between a send and its await the sender is
// the one to read. An answer the agent never sends stays owed, and the
// watcher then reads every answer: slower, never stuck.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/sched/AgentConnection.h"

#include "kiln/common/FramedSocket.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kiln::server {

class LocalAgentLink final : public AgentLink {
public:
  /// Opens the store's file of a blob, read-only.
  using OpenBlobFn =
      std::function<absl::StatusOr<UniqueFd>(const v1::Digest &)>;

  LocalAgentLink(std::string agentId, UniqueFd socket, OpenBlobFn openBlob);
  /// Shuts the socket down and joins the watcher.
  ~LocalAgentLink() override;

  /// Sends a task with its inputs' files: `inputFiles` for inputs without
  /// a payload, the store's files for blob inputs. The frame is written
  /// from `task` and the record's serialized fragment: nothing is copied
  /// into a message first. UNAVAILABLE when the link is gone;
  /// DEADLINE_EXCEEDED as FramedSocket::send says (an agent that stopped
  /// reading part-way through the frame has its link shut down).
  absl::Status send(const v1::Task &task, const TaskRecord &record,
                    const TensorFiles &inputFiles, const LinkExtras &extras,
                    std::chrono::steady_clock::time_point deadline) override;
  bool passesFiles() const override { return true; }
  /// Reads answers until `outcome` is ready or `deadline` passes, when
  /// nobody is reading; else waits for the reader to hand the answer over
  /// (its promise wakes this caller alone).
  std::future_status await(std::future<TaskOutcome> &outcome,
                           std::chrono::steady_clock::time_point deadline) override;

  /// Results go to `connection`, the agent's current registration; returns
  /// the one they went to before (to restore if the registration fails).
  std::weak_ptr<AgentConnection> bind(std::weak_ptr<AgentConnection> connection);
  /// Results go to `previous` again if they go to `connection` now.
  void unbind(const AgentConnection *connection,
              std::weak_ptr<AgentConnection> previous = {});

  const std::string &agentId() const { return id; }

private:
  /// Reads and hands over frames until `outcome` is ready (true), the
  /// link ends (true: the end fails the bound connection's tasks), or `deadline`
  /// passes with nothing to read (false). The caller holds the read turn.
  bool readUntil(std::future<TaskOutcome> &outcome,
                 std::chrono::steady_clock::time_point deadline);
  /// Receives one frame, hands it to the task it answers and wakes that
  /// task's caller; false once the link has ended (reported once: the
  /// link is shut down and the bound connection closed).
  bool readOne();
  /// When the reading has just been left: wakes the watcher, to drain a
  /// departed agent's link or to read the answers still owed. Under
  /// readMutex.
  void handReadingOn();
  /// The watcher's reading, until no answer is owed or the link ends.
  void readWhileOwed();
  /// The watcher: reads the answers owed when handed the reading; when
  /// the agent hangs up, reads until the end. Without an eventfd, reads
  /// every answer.
  void watchLoop();
  /// Turns a LocalResult frame into the answer the caller awaits (the
  /// output files stay files); DATA_LOSS for a frame that is not one (the
  /// link is then ended).
  absl::StatusOr<AgentAnswer> answerOf(const std::string &frame,
                                       std::vector<UniqueFd> &files);

  std::string id;
  FramedSocket link;
  OpenBlobFn openBlob;
  std::mutex bindMutex;
  /// Weak: the connection owns a WeakAgentLink to this link, not the link.
  std::weak_ptr<AgentConnection> bound; // guarded by bindMutex
  /// The reading: one thread at a time receives frames; the watcher
  /// waits on readingFree to drain a departed agent's link.
  std::mutex readMutex;
  bool reading = false;         // guarded by readMutex
  /// Answers the agent owes: tasks sent (counted before their frames go)
  /// less answers received.
  size_t owed = 0;              // guarded by readMutex
  bool watcherDraining = false; // guarded by readMutex
  std::condition_variable readingFree;
  /// An eventfd that wakes the watcher to read the answers owed.
  UniqueFd readNeeded;
  std::atomic<bool> ended{false};
  std::string frame;               // the reader's buffers, reused
  std::vector<UniqueFd> files;
  std::thread watcher;
};

/// What an AgentConnection holds for a local agent: the link while
/// LocalLinks keeps it (a restarted agent's replaces it), so a connection
/// never keeps a dead process's link, or its watcher thread, alive.
class WeakAgentLink final : public AgentLink {
public:
  explicit WeakAgentLink(std::weak_ptr<LocalAgentLink> link)
      : link(std::move(link)) {}
  absl::Status send(const v1::Task &task, const TaskRecord &record,
                    const TensorFiles &inputFiles, const LinkExtras &extras,
                    std::chrono::steady_clock::time_point deadline) override {
    std::shared_ptr<LocalAgentLink> live = link.lock();
    if (!live)
      return absl::UnavailableError("the agent's local link is gone");
    return live->send(task, record, inputFiles, extras, deadline);
  }
  bool passesFiles() const override { return true; }
  std::future_status await(std::future<TaskOutcome> &outcome,
                           std::chrono::steady_clock::time_point deadline) override {
    std::shared_ptr<LocalAgentLink> live = link.lock();
    return live ? live->await(outcome, deadline)
                : outcome.wait_until(deadline);
  }

private:
  std::weak_ptr<LocalAgentLink> link;
};

/// The local links of the agents kilnd started, by agent id. Thread-safe.
class LocalLinks {
public:
  /// Replaces the link of `link->agentId()` (a restarted agent's new one).
  void set(std::shared_ptr<LocalAgentLink> link);
  /// The link of `agentId`; null when it has none.
  std::shared_ptr<LocalAgentLink> find(const std::string &agentId) const;

private:
  mutable std::mutex mutex;
  std::map<std::string, std::shared_ptr<LocalAgentLink>> links;
};

} // namespace kiln::server
