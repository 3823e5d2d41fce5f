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
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/sched/AgentConnection.h"

#include "kiln/common/FramedSocket.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace kiln::server {

class LocalAgentLink final : public AgentLink {
public:
  /// Opens the store's file of a blob, read-only.
  using OpenBlobFn =
      std::function<absl::StatusOr<UniqueFd>(const v1::Digest &)>;

  LocalAgentLink(std::string agentId, UniqueFd socket, OpenBlobFn openBlob);
  /// Closes the socket and joins the reader.
  ~LocalAgentLink() override;

  /// Sends a task with its inputs' files: `inputFiles` for inputs without
  /// a payload, the store's files for blob inputs. The frame is written
  /// from `task` and the record's serialized fragment: nothing is copied
  /// into a message first. False when the link is gone.
  bool send(const v1::Task &task, const TaskRecord &record,
            const TensorFiles &inputFiles, const LinkExtras &extras) override;
  bool passesFiles() const override { return true; }

  /// Results go to `connection`, the agent's current registration; returns
  /// the one they went to before (to restore if the registration fails).
  std::weak_ptr<AgentConnection> bind(std::weak_ptr<AgentConnection> connection);
  /// Results go to `previous` again if they go to `connection` now.
  void unbind(const AgentConnection *connection,
              std::weak_ptr<AgentConnection> previous = {});

  const std::string &agentId() const { return id; }

private:
  void readLoop();
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
  std::thread reader;
};

/// What an AgentConnection holds for a local agent: the link while
/// LocalLinks keeps it (a restarted agent's replaces it), so a connection
/// never keeps a dead process's link, or its reader thread, alive.
class WeakAgentLink final : public AgentLink {
public:
  explicit WeakAgentLink(std::weak_ptr<LocalAgentLink> link)
      : link(std::move(link)) {}
  bool send(const v1::Task &task, const TaskRecord &record,
            const TensorFiles &inputFiles, const LinkExtras &extras) override {
    std::shared_ptr<LocalAgentLink> live = link.lock();
    return live && live->send(task, record, inputFiles, extras);
  }
  bool passesFiles() const override { return true; }

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
