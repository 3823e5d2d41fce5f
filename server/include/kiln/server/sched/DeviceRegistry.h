//===- DeviceRegistry.h - the devices connected agents own ------*- C++ -*-===//
//
// This file declares DeviceRegistry: which agents are connected, their
// devices, each device's health and queue depth, and leases on devices.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/sched/AgentConnection.h"
#include "kiln/v1/devices.pb.h"

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kiln::server {

/// A claim on one device for one task; give it back with release().
struct DeviceLease {
  std::string deviceId;
  std::shared_ptr<AgentConnection> session;
};

/// Tracks agents and devices. Thread-safe. Waiters for a device wake on a
/// condition variable whenever a device appears or becomes ready.
class DeviceRegistry {
public:
  using Clock = std::chrono::steady_clock;

  /// Agents must heartbeat every `heartbeatInterval`; one silent for more
  /// than three intervals has its devices marked UNHEALTHY.
  explicit DeviceRegistry(std::chrono::milliseconds heartbeatInterval);
  ~DeviceRegistry();

  /// Agents on their way (the ids of the agents kilnd starts itself): until
  /// each has registered once, acquire() waits for any kind, since one of
  /// them may serve it. After that, and after `startupGrace` (agents that
  /// connect on their own get that long after kilnd starts), a kind that no
  /// agent has served since the registry was made fails at once.
  void expectAgents(const std::vector<std::string> &agentIds,
                    std::chrono::milliseconds startupGrace);

  /// Starts a thread that calls checkHeartbeats() every interval.
  void startHeartbeatMonitor();

  /// Makes every current and future acquire() fail at once (daemon exit).
  void shutdown();

  /// Registers `session`'s devices as "<agent_id>/<index>", READY, and
  /// returns the session token the agent must present to take its id over
  /// again. A live session under the same agent id is closed and replaced
  /// only when `sessionToken` is that session's token (the agent itself,
  /// reconnecting); otherwise the registration is ALREADY_EXISTS and the live
  /// agent keeps its devices; with `identityProven` (the caller proved with
  /// a certificate or token that the id is its own) the new session
  /// replaces the live one. INVALID_ARGUMENT when the agent id is empty,
  /// there are no devices, or a device has no kind.
  absl::StatusOr<std::string>
  addAgent(const std::shared_ptr<AgentConnection> &session,
           const std::vector<v1::Device> &devices,
           const std::string &sessionToken = "",
           bool identityProven = false);

  /// Closes `session` with `reason` (failing its in-flight tasks) and removes
  /// its devices, if it is still the registered session for its agent id.
  void removeAgent(const std::shared_ptr<AgentConnection> &session,
                   const absl::Status &reason);

  /// Records a heartbeat; the agent's devices become READY again, and
  /// taken again (markStalled).
  void heartbeat(const AgentConnection &session);

  /// The agent of `lease` took none of a task by the call's deadline (it
  /// does not read its link: stopped, stuck, or every thread busy):
  /// acquire() prefers its other agents' devices to its until it next
  /// heartbeats, and takes them only when no other fits.
  void markStalled(const DeviceLease &lease);

  /// Marks the devices of agents silent for more than three intervals as of
  /// `now` UNHEALTHY.
  void checkHeartbeats(Clock::time_point now);

  /// Devices, ordered by id; all when `kind` is empty.
  std::vector<v1::Device> listDevices(const std::string &kind) const;

  /// Leases the READY device of `kind` (one whose agent is not stalled
  /// first, see markStalled) with the smallest queue depth whose
  /// agent session is not in `excluded` and that has `requiredFeatures`
  /// (sorted LLVM CPU feature names; checkDeviceFeatures) and
  /// `kernelLibrary` (checkDeviceKernelLibrary), waiting until
  /// `waitUntil` for one to appear. UNAVAILABLE naming the kind when none
  /// does; FAILED_PRECONDITION naming the missing features or library, at
  /// once, when devices of the kind are registered but none has them;
  /// UNAVAILABLE at once for a kind no agent has served and none is expected
  /// (expectAgents), naming the kinds there are. A non-empty `onlyDevice`
  /// is the one device that may be leased: FAILED_PRECONDITION at once when
  /// it is not registered (or its session is excluded).
  absl::StatusOr<DeviceLease>
  acquire(const std::string &kind,
          const absl::flat_hash_set<const AgentConnection *> &excluded,
          Clock::time_point waitUntil,
          const std::vector<std::string> &requiredFeatures = {},
          const std::string &kernelLibrary = "",
          const std::string &onlyDevice = "");

  /// Returns a lease: the device's queue depth drops by one.
  void release(const DeviceLease &lease);

  std::chrono::milliseconds heartbeatInterval() const { return interval; }

  /// Agents registered now.
  size_t agentCount() const;

private:
  struct Entry {
    v1::Device device;
    std::shared_ptr<AgentConnection> session;
    /// The device's reported CPU features, parsed once (DeviceFit.h).
    std::optional<std::vector<std::string>> cpuFeatures;
    /// Its agent took no task by a deadline and has not heartbeat since.
    bool stalled = false;
  };
  struct Agent {
    std::shared_ptr<AgentConnection> session;
    std::string sessionToken;
    std::vector<std::string> deviceIds;
    Clock::time_point lastHeartbeat;
  };

  /// Drops `agentId`'s devices; caller holds the mutex.
  void eraseAgentLocked(const std::string &agentId);

  const std::chrono::milliseconds interval;
  mutable std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, Entry> devices;
  std::map<std::string, Agent> agents;
  /// Kinds some agent registered since the registry was made.
  std::set<std::string> knownKinds;
  /// Expected agents that have not registered yet.
  std::set<std::string> pendingAgents;
  const Clock::time_point createdAt = Clock::now();
  std::chrono::milliseconds startupGrace{0};
  bool failFastForUnknownKinds = false;
  bool stopping = false;
  std::thread monitor;
};

} // namespace kiln::server
