//===- AgentService.cpp - the stream device agents dial in on -------------===//
//
// This file implements AgentService::Connect: an agent's registration, its
// heartbeats and results, and its tasks written on the stream through a
// StreamAgentLink (unless kilnd started it: then over its local link).
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/AgentService.h"

#include "kiln/common/AgentProtocol.h"

#include "kiln/server/api/GrpcStatus.h"
#include "kiln/server/sched/StreamAgentLink.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#include <spdlog/spdlog.h>


namespace kiln::server {

namespace {

using AgentStream =
    grpc::ServerReaderWriter<v1::DaemonMessage, v1::AgentMessage>;

} // namespace

AgentService::AgentService(DeviceRegistry &registry, std::string taskPublicKey,
                           const AccessPolicy &access,
                           const LocalLinks &localLinks)
    : registry(registry), taskPublicKey(std::move(taskPublicKey)),
      access(access), localLinks(localLinks) {}

grpc::Status AgentService::Connect(grpc::ServerContext *context,
                                   AgentStream *stream) {
  Principal caller;
  if (grpc::Status denied =
          access.admit(*context, "kiln.v1.Agent/Connect", &caller);
      !denied.ok())
    return denied;
  v1::AgentMessage message;
  if (!stream->Read(&message))
    return toGrpcStatus(absl::InvalidArgumentError(
        "agent stream closed before RegisterAgent"));
  if (!message.has_register_())
    return toGrpcStatus(absl::InvalidArgumentError(
        "the first message on Agent.Connect must be RegisterAgent"));
  const v1::RegisterAgent &registration = message.register_();
  if (registration.protocol_version() != kAgentProtocolVersion) {
    absl::Status refused = absl::FailedPreconditionError(absl::StrCat(
        "agent '", registration.agent_id(), "' speaks agent protocol ",
        registration.protocol_version(),
        registration.protocol_version() == 0
            ? " (a build from before protocol versions)"
            : "",
        "; this kilnd speaks protocol ", kAgentProtocolVersion,
        ": run an agent from the same Kiln release"));
    spdlog::error("agent registration from {} refused: {}", context->peer(),
                  std::string(refused.message()));
    return toGrpcStatus(refused);
  }
  // An authenticated agent registers under the identity it proved: its
  // certificate's CN exactly, or its token's name N (as N or N-<suffix>:
  // the agents of a DaemonSet share one token and add their node's name;
  // holders of one token are one principal).
  bool identityProven = caller.proof != Proof::None;
  const std::string &agentId = registration.agent_id();
  bool ownsId =
      agentId == caller.name ||
      (caller.proof == Proof::Token &&
       absl::StartsWith(agentId, absl::StrCat(caller.name, "-")));
  if (identityProven && !ownsId) {
    absl::Status refused = absl::PermissionDeniedError(absl::StrCat(
        "agent id '", agentId, "' is not the identity '", caller.name,
        "' proven by the agent's ",
        caller.proof == Proof::Certificate
            ? "certificate (CN)"
            : "token (its name; ids '<name>-<suffix>' are allowed too)",
        ": an agent registers under its own identity only"));
    spdlog::error("agent registration from {} refused: {}", context->peer(),
                  std::string(refused.message()));
    return toGrpcStatus(refused);
  }
  auto link = std::make_shared<StreamAgentLink>(
      [stream](const v1::DaemonMessage &out) { return stream->Write(out); },
      [context] { context->TryCancel(); });
  // An agent kilnd started gets its tasks over the link kilnd made for it,
  // and its id is registered only with that link: tasks for it go to that
  // process, whoever else holds its token.
  std::shared_ptr<LocalAgentLink> local = localLinks.find(agentId);
  if (local && !registration.local_link()) {
    absl::Status refused = absl::PermissionDeniedError(absl::StrCat(
        "agent id '", agentId,
        "' belongs to an agent kilnd started itself, which registers with its "
        "local link; run other agents under other ids"));
    spdlog::error("agent registration from {} refused: {}", context->peer(),
                  std::string(refused.message()));
    return toGrpcStatus(refused);
  }
  auto session = std::make_shared<AgentConnection>(
      agentId, local ? std::shared_ptr<AgentLink>(
                           std::make_shared<WeakAgentLink>(local))
                     : link);
  // Bound before the registration is visible to the scheduler, so that no
  // result of a task dispatched to it can arrive unbound.
  std::weak_ptr<AgentConnection> previous;
  if (local)
    previous = local->bind(session);
  std::vector<v1::Device> devices(registration.devices().begin(),
                                  registration.devices().end());

  v1::DaemonMessage registered;
  registered.mutable_registered()->set_heartbeat_interval_ms(
      registry.heartbeatInterval().count());
  registered.mutable_registered()->set_task_public_key(taskPublicKey);
  registered.mutable_registered()->set_protocol_version(kAgentProtocolVersion);
  absl::Status status = link->greet(registered, [&] {
    absl::StatusOr<std::string> token =
        registry.addAgent(session, devices, registration.session_token(),
                          identityProven);
    if (token.ok())
      registered.mutable_registered()->set_session_token(*token);
    return token.status();
  });
  if (!status.ok()) {
    spdlog::error("agent registration from {} refused: {}", context->peer(),
                  std::string(status.message()));
    link->detach();
    if (local)
      local->unbind(session.get(), previous);
    return toGrpcStatus(status);
  }
  spdlog::info("agent '{}' connected from {} with {} device(s){}",
               registration.agent_id(), context->peer(), devices.size(),
               local ? "; tasks over its local link" : "");

  absl::Status endReason = absl::UnavailableError(absl::StrCat(
      "agent '", registration.agent_id(), "' disconnected"));
  while (stream->Read(&message)) {
    switch (message.kind_case()) {
    case v1::AgentMessage::kHeartbeat:
      registry.heartbeat(*session);
      break;
    case v1::AgentMessage::kResult:
      if (!session->complete(message.result()))
        spdlog::warn("agent '{}' answered task '{}' that nobody awaits "
                     "(deadline passed?)",
                     session->agentId(), message.result().task_id());
      break;
    default:
      endReason = absl::InvalidArgumentError(absl::StrCat(
          "agent '", session->agentId(),
          "' sent an unexpected message after registering"));
      break;
    }
    if (endReason.code() == absl::StatusCode::kInvalidArgument)
      break;
  }
  // The stream may not be written once we return.
  link->detach();
  if (local)
    local->unbind(session.get());
  registry.removeAgent(
      session, absl::UnavailableError(absl::StrCat(
                   "agent '", session->agentId(), "' disconnected")));
  return toGrpcStatus(endReason.code() == absl::StatusCode::kInvalidArgument
                          ? endReason
                          : absl::OkStatus());
}

} // namespace kiln::server
