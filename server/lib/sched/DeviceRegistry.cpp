//===- DeviceRegistry.cpp - the devices connected agents own --------------===//
//
// This file implements DeviceRegistry: registration, heartbeat health,
// least-loaded leasing and removal of lost agents.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/sched/DeviceRegistry.h"
#include "kiln/server/sched/DeviceFit.h"

#include "kiln/common/Credentials.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <spdlog/spdlog.h>

namespace kiln::server {

DeviceRegistry::DeviceRegistry(std::chrono::milliseconds heartbeatInterval)
    : interval(heartbeatInterval) {}

void DeviceRegistry::expectAgents(const std::vector<std::string> &agentIds,
                                  std::chrono::milliseconds grace) {
  std::lock_guard<std::mutex> lock(mutex);
  for (const std::string &id : agentIds)
    if (!agents.contains(id))
      pendingAgents.insert(id);
  startupGrace = grace;
  failFastForUnknownKinds = true;
}

DeviceRegistry::~DeviceRegistry() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  changed.notify_all();
  if (monitor.joinable())
    monitor.join();
}

void DeviceRegistry::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  changed.notify_all();
}

void DeviceRegistry::startHeartbeatMonitor() {
  monitor = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex);
    while (!stopping) {
      // A periodic timer, not synchronisation: wake every interval.
      changed.wait_for(lock, interval);
      if (stopping)
        break;
      lock.unlock();
      checkHeartbeats(Clock::now());
      lock.lock();
    }
  });
}

absl::StatusOr<std::string>
DeviceRegistry::addAgent(const std::shared_ptr<AgentConnection> &session,
                         const std::vector<v1::Device> &agentDevices,
                         const std::string &sessionToken,
                         bool identityProven) {
  const std::string &agentId = session->agentId();
  if (agentId.empty())
    return absl::InvalidArgumentError("RegisterAgent.agent_id is empty");
  if (agentId.find('/') != std::string::npos)
    return absl::InvalidArgumentError(
        absl::StrCat("agent id '", agentId, "' must not contain '/'"));
  if (agentDevices.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("agent '", agentId, "' registered no devices"));
  for (size_t i = 0; i < agentDevices.size(); ++i)
    if (agentDevices[i].kind().empty())
      return absl::InvalidArgumentError(absl::StrCat(
          "agent '", agentId, "' device ", i, " has no kind"));

  std::shared_ptr<AgentConnection> replaced;
  // 128 random bits; on a generator failure "", which never matches, so
  // the agent cannot take its id over live.
  std::string token = randomHex(16).value_or("");
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto old = agents.find(agentId);
    if (old != agents.end()) {
      bool sameAgent = identityProven ||
                       (!sessionToken.empty() &&
                        !old->second.sessionToken.empty() &&
                        sessionToken == old->second.sessionToken);
      if (!sameAgent)
        return absl::AlreadyExistsError(absl::StrCat(
            "agent id '", agentId,
            "' belongs to an agent that is connected; a second process may "
            "not take it over (give each agent its own --agent-id; a "
            "reconnecting agent presents its session token)"));
      replaced = old->second.session;
      eraseAgentLocked(agentId);
    }
    pendingAgents.erase(agentId);
    Agent &agent = agents[agentId];
    agent.session = session;
    agent.sessionToken = token;
    agent.lastHeartbeat = Clock::now();
    for (size_t i = 0; i < agentDevices.size(); ++i) {
      Entry entry{agentDevices[i], session,
                  reportedCpuFeatures(agentDevices[i])};
      entry.device.set_id(absl::StrCat(agentId, "/", i));
      entry.device.set_agent_id(agentId);
      entry.device.set_state(v1::DEVICE_STATE_READY);
      entry.device.set_queue_depth(0);
      agent.deviceIds.push_back(entry.device.id());
      knownKinds.insert(entry.device.kind());
      spdlog::info("device {} registered (kind '{}')", entry.device.id(),
                   entry.device.kind());
      devices[entry.device.id()] = std::move(entry);
    }
  }
  if (replaced) {
    spdlog::warn("agent '{}' reconnected with its session token; dropping "
                 "its old connection",
                 agentId);
    replaced->close(absl::UnavailableError(absl::StrCat(
        "agent '", agentId, "' reconnected while the task was in flight")));
  }
  changed.notify_all();
  return token;
}

void DeviceRegistry::eraseAgentLocked(const std::string &agentId) {
  auto it = agents.find(agentId);
  if (it == agents.end())
    return;
  for (const std::string &deviceId : it->second.deviceIds)
    devices.erase(deviceId);
  agents.erase(it);
}

void DeviceRegistry::removeAgent(const std::shared_ptr<AgentConnection> &session,
                                 const absl::Status &reason) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = agents.find(session->agentId());
    if (it != agents.end() && it->second.session == session) {
      spdlog::warn("agent '{}' disconnected ({}); removing {} device(s)",
                   session->agentId(), std::string(reason.message()),
                   it->second.deviceIds.size());
      eraseAgentLocked(session->agentId());
    }
  }
  session->close(reason);
  changed.notify_all();
}

void DeviceRegistry::heartbeat(const AgentConnection &session) {
  bool recovered = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = agents.find(session.agentId());
    if (it == agents.end() || it->second.session.get() != &session)
      return;
    it->second.lastHeartbeat = Clock::now();
    for (const std::string &deviceId : it->second.deviceIds) {
      Entry &entry = devices[deviceId];
      if (entry.stalled) {
        entry.stalled = false;
        spdlog::info("device {} takes tasks again (its agent heartbeat)", deviceId);
        recovered = true;
      }
      v1::Device &device = entry.device;
      if (device.state() != v1::DEVICE_STATE_READY) {
        device.set_state(v1::DEVICE_STATE_READY);
        spdlog::info("device {} is healthy again", deviceId);
        recovered = true;
      }
    }
  }
  if (recovered)
    changed.notify_all();
}

void DeviceRegistry::checkHeartbeats(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex);
  for (auto &[agentId, agent] : agents) {
    if (now - agent.lastHeartbeat <= 3 * interval)
      continue;
    for (const std::string &deviceId : agent.deviceIds) {
      v1::Device &device = devices[deviceId].device;
      if (device.state() == v1::DEVICE_STATE_UNHEALTHY)
        continue;
      device.set_state(v1::DEVICE_STATE_UNHEALTHY);
      spdlog::warn("device {} is unhealthy: agent '{}' missed 3 heartbeats",
                   deviceId, agentId);
    }
  }
}

std::vector<v1::Device>
DeviceRegistry::listDevices(const std::string &kind) const {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<v1::Device> result;
  for (const auto &[id, entry] : devices)
    if (kind.empty() || entry.device.kind() == kind)
      result.push_back(entry.device);
  return result;
}

absl::StatusOr<DeviceLease>
DeviceRegistry::acquire(const std::string &kind,
                        const absl::flat_hash_set<const AgentConnection *> &excluded,
                        Clock::time_point waitUntil,
                        const std::vector<std::string> &requiredFeatures,
                        const std::string &kernelLibrary,
                        const std::string &onlyDevice) {
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    if (!onlyDevice.empty()) {
      auto pinned = devices.find(onlyDevice);
      if (pinned == devices.end() || pinned->second.device.kind() != kind ||
          excluded.contains(pinned->second.session.get()))
        return absl::FailedPreconditionError(absl::StrCat(
            "device ", onlyDevice,
            ", which holds the call's held inputs, is no longer registered "
            "as a ", kind, " device: the tensors it held are gone"));
    }
    Entry *best = nullptr;
    int registered = 0;
    absl::Status unfit; // why the first device that cannot run the code can't
    int fitting = 0;
    for (auto &[id, entry] : devices) {
      if (entry.device.kind() != kind ||
          excluded.contains(entry.session.get()) ||
          (!onlyDevice.empty() && id != onlyDevice))
        continue;
      ++registered;
      absl::Status fits = checkDeviceFeatures(entry.device, entry.cpuFeatures,
                                              requiredFeatures);
      if (fits.ok())
        fits = checkDeviceKernelLibrary(entry.device, kernelLibrary);
      if (!fits.ok()) {
        if (unfit.ok())
          unfit = fits;
        continue;
      }
      ++fitting;
      if (entry.device.state() != v1::DEVICE_STATE_READY)
        continue;
      if (!best || (best->stalled && !entry.stalled) ||
          (best->stalled == entry.stalled &&
           entry.device.queue_depth() < best->device.queue_depth()))
        best = &entry;
    }
    if (best) {
      best->device.set_queue_depth(best->device.queue_depth() + 1);
      return DeviceLease{best->device.id(), best->session};
    }
    // Devices are there but none can run this code: waiting would not help.
    if (registered > 0 && fitting == 0)
      return unfit;
    if (stopping)
      return absl::UnavailableError("kilnd is shutting down");
    // No agent of this kind has ever come, every agent kilnd starts has
    // registered, and others have had their time to connect: waiting would
    // only delay the error.
    if (registered == 0 && failFastForUnknownKinds && !knownKinds.contains(kind) &&
        pendingAgents.empty() && Clock::now() >= createdAt + startupGrace) {
      std::set<std::string> served;
      for (const auto &[id, entry] : devices)
        served.insert(entry.device.kind());
      return absl::UnavailableError(absl::StrCat(
          "no agent serving device kind '", kind,
          "' has connected to this kilnd (kinds it has: ",
          served.empty() ? "none" : absl::StrJoin(served, ", "), ")"));
    }
    if (Clock::now() >= waitUntil) {
      if (registered == 0)
        return absl::UnavailableError(
            absl::StrCat("no device of kind '", kind, "' is registered"));
      return absl::UnavailableError(
          absl::StrCat("no healthy device of kind '", kind, "' (", registered,
                       " registered, none READY)"));
    }
    changed.wait_until(lock, waitUntil);
  }
}

size_t DeviceRegistry::agentCount() const {
  std::lock_guard<std::mutex> lock(mutex);
  return agents.size();
}

void DeviceRegistry::markStalled(const DeviceLease &lease) {
  std::lock_guard<std::mutex> lock(mutex);
  auto agent = agents.find(lease.session->agentId());
  if (agent == agents.end() || agent->second.session != lease.session)
    return;
  for (const std::string &deviceId : agent->second.deviceIds) {
    auto found = devices.find(deviceId);
    if (found == devices.end())
      continue;
    Entry &entry = found->second;
    if (!entry.stalled)
      spdlog::warn("device {}: its agent took no task by the call's deadline; "
                   "other devices of kind '{}' are preferred until it heartbeats",
                   deviceId, entry.device.kind());
    entry.stalled = true;
  }
}

void DeviceRegistry::release(const DeviceLease &lease) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = devices.find(lease.deviceId);
  if (it != devices.end() && it->second.session == lease.session &&
      it->second.device.queue_depth() > 0)
    it->second.device.set_queue_depth(it->second.device.queue_depth() - 1);
}

} // namespace kiln::server
