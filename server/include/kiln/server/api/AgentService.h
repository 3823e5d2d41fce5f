//===- AgentService.h - the stream device agents dial in on -----*- C++ -*-===//
//
// This file declares AgentService, kiln.v1.Agent: registration, heartbeats,
// task results, and cleanup when an agent's stream ends.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/api/AccessPolicy.h"
#include "kiln/server/sched/DeviceRegistry.h"
#include "kiln/server/sched/LocalAgentLink.h"
#include "kiln/v1/agent.grpc.pb.h"

namespace kiln::server {

/// Serves Agent.Connect. One call is one AgentConnection for as long as the
/// stream lives; the protocol is documented in proto/kiln/v1/agent.proto.
class AgentService final : public v1::Agent::Service {
public:
  /// Registers agents in `registry` and hands each the daemon's task key
  /// (`taskPublicKey`, PEM) and a session token. Agents of another protocol
  /// version are FAILED_PRECONDITION; a live agent's id without its session
  /// token is ALREADY_EXISTS.
  ///
  /// An agent that registers with local_link set and has a link in
  /// `localLinks` (an agent kilnd started) gets its tasks over that link;
  /// registration and heartbeats stay on the stream.
  AgentService(DeviceRegistry &registry, std::string taskPublicKey,
               const AccessPolicy &access, const LocalLinks &localLinks);

  grpc::Status
  Connect(grpc::ServerContext *context,
          grpc::ServerReaderWriter<v1::DaemonMessage, v1::AgentMessage> *stream)
      override;

private:
  DeviceRegistry &registry;
  std::string taskPublicKey;
  const AccessPolicy &access;
  const LocalLinks &localLinks;
};

} // namespace kiln::server
