//===- LocalAgentLink.cpp - kilnd's end of an agent's local link ----------===//
//
// This file implements LocalAgentLink and LocalLinks.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/sched/LocalAgentLink.h"

#include "kiln/common/TensorTypes.h"
#include "kiln/worker/local_link.pb.h"

#include "absl/strings/str_cat.h"

#include <spdlog/spdlog.h>

namespace kiln::server {

LocalAgentLink::LocalAgentLink(std::string agentId, UniqueFd socket,
                               OpenBlobFn openBlob, StoreFileFn storeFile)
    : id(std::move(agentId)), link(std::move(socket)),
      openBlob(std::move(openBlob)), storeFile(std::move(storeFile)) {
  reader = std::thread([this] { readLoop(); });
}

LocalAgentLink::~LocalAgentLink() {
  // Never on the reader thread: connections hold the link weakly
  // (WeakAgentLink), so the connection the reader holds for a moment never
  // owns it.
  link.shutdown();
  if (reader.joinable())
    reader.join();
}

bool LocalAgentLink::send(v1::DaemonMessage &&message) {
  if (!message.has_task())
    return false; // only tasks travel here; the rest stays on the stream
  worker::LocalTask local;
  local.mutable_task()->Swap(message.mutable_task()); // no copy of inline inputs
  std::vector<UniqueFd> opened;
  std::vector<int> files;
  for (int i = 0; i < local.task().inputs_size(); ++i) {
    const v1::Tensor &input = local.task().inputs(i);
    // Past the frame's file limit the agent fetches the rest.
    if (input.payload_case() != v1::Tensor::kBlob ||
        files.size() == FramedSocket::kMaxFiles)
      continue;
    // Pinned by the Execute; a blob that cannot be opened is left for the
    // agent to fetch, which reports it properly.
    absl::StatusOr<UniqueFd> file = openBlob(input.blob());
    if (!file.ok())
      continue;
    local.add_file_inputs(static_cast<uint32_t>(i));
    files.push_back(file->get());
    opened.push_back(*std::move(file));
  }
  std::string bytes;
  if (!local.SerializeToString(&bytes))
    return false;
  absl::Status sent = link.send(bytes, files);
  if (!sent.ok())
    spdlog::warn("local link to agent '{}': {}", id,
                 std::string(sent.message()));
  return sent.ok();
}

std::weak_ptr<AgentConnection>
LocalAgentLink::bind(std::weak_ptr<AgentConnection> connection) {
  std::lock_guard<std::mutex> lock(bindMutex);
  return std::exchange(bound, std::move(connection));
}

void LocalAgentLink::unbind(const AgentConnection *connection,
                            std::weak_ptr<AgentConnection> previous) {
  std::lock_guard<std::mutex> lock(bindMutex);
  std::shared_ptr<AgentConnection> current = bound.lock();
  if (!current || current.get() == connection)
    bound = std::move(previous);
}

absl::StatusOr<v1::TaskResult>
LocalAgentLink::resultOf(const std::string &frame,
                         std::vector<UniqueFd> &files) {
  worker::LocalResult local;
  // No task id to answer: the link is broken, like a malformed frame.
  if (!local.ParseFromString(frame))
    return absl::DataLossError("a result frame that is not a LocalResult");
  v1::TaskResult result = std::move(*local.mutable_result());
  absl::Status stored = absl::OkStatus();
  if (local.file_outputs_size() != static_cast<int>(files.size()))
    stored = absl::InternalError(absl::StrCat(
        "agent '", id, "' named ", local.file_outputs_size(),
        " output files and passed ", files.size()));
  for (int i = 0; stored.ok() && i < local.file_outputs_size(); ++i) {
    uint32_t index = local.file_outputs(i);
    if (index >= static_cast<uint32_t>(result.outputs_size())) {
      stored = absl::InternalError(absl::StrCat(
          "agent '", id, "' passed a file for output ", index, " of ",
          result.outputs_size()));
      break;
    }
    v1::Tensor &output = *result.mutable_outputs(static_cast<int>(index));
    absl::StatusOr<int64_t> size = byteSize(output.type());
    absl::StatusOr<v1::Digest> digest =
        size.ok() ? storeFile(files[i].get(), *size)
                  : absl::StatusOr<v1::Digest>(size.status());
    if (!digest.ok()) {
      stored = absl::Status(digest.status().code(),
                            absl::StrCat("storing output ", index, " of agent '",
                                         id, "': ", digest.status().message()));
      break;
    }
    *output.mutable_blob() = *std::move(digest);
  }
  if (!stored.ok()) {
    result.clear_outputs();
    result.set_code(static_cast<int32_t>(stored.code()));
    result.set_message(std::string(stored.message()));
  }
  return result;
}

void LocalAgentLink::readLoop() {
  std::string frame;
  std::vector<UniqueFd> files;
  while (true) {
    absl::Status received = link.receive(frame, files);
    absl::StatusOr<v1::TaskResult> result =
        received.ok() ? resultOf(frame, files)
                      : absl::StatusOr<v1::TaskResult>(received);
    files.clear();
    if (!result.ok()) {
      received = result.status();
      if (!absl::IsUnavailable(received))
        spdlog::error("local link to agent '{}': {}", id,
                      std::string(received.message()));
      // Nothing more will be read: later sends fail at once, and the tasks
      // in flight fail now instead of at their deadlines.
      link.shutdown();
      std::shared_ptr<AgentConnection> connection;
      {
        std::lock_guard<std::mutex> lock(bindMutex);
        connection = bound.lock();
      }
      if (connection)
        connection->close(absl::UnavailableError(absl::StrCat(
            "the local link to agent '", id, "' ended: ", received.message())));
      return;
    }
    std::shared_ptr<AgentConnection> connection;
    {
      std::lock_guard<std::mutex> lock(bindMutex);
      connection = bound.lock();
    }
    if (!connection || !connection->complete(*std::move(result)))
      spdlog::warn("agent '{}' answered a task that nobody awaits over its "
                   "local link (deadline passed, or it reconnected)",
                   id);
  }
}

void LocalLinks::set(std::shared_ptr<LocalAgentLink> link) {
  std::shared_ptr<LocalAgentLink> replaced;
  std::lock_guard<std::mutex> lock(mutex);
  auto &slot = links[link->agentId()];
  replaced = std::move(slot);
  slot = std::move(link);
}

std::shared_ptr<LocalAgentLink>
LocalLinks::find(const std::string &agentId) const {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = links.find(agentId);
  return it == links.end() ? nullptr : it->second;
}

} // namespace kiln::server
