//===- LocalAgentLink.cpp - kilnd's end of an agent's local link ----------===//
//
// This file implements LocalAgentLink and LocalLinks.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/sched/LocalAgentLink.h"

#include "kiln/worker/local_link.pb.h"

#include "absl/strings/str_cat.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <spdlog/spdlog.h>

namespace kiln::server {

namespace {

/// Appends LocalTask's `task` field to the serialized LocalTask `bytes`
/// (`task`'s own fields, then the record's signature fragment, under one
/// length: a parser merges the two into one Task), then its `record` field
/// (the record's bytes), with no copy of either into a message. False when
/// the task does not serialize.
bool appendTask(const v1::Task &task, const TaskRecord &record,
                std::string &bytes) {
  const std::string &signature = record.signatureFragment();
  const std::string &recordBytes = record.recordBytes();
  size_t size = task.ByteSizeLong();
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream out(&stream);
  constexpr uint32_t kLengthDelimited = 2;
  auto tag = [&](int field) {
    out.WriteTag(static_cast<uint32_t>(field) << 3 | kLengthDelimited);
  };
  tag(worker::LocalTask::kTaskFieldNumber);
  out.WriteVarint64(size + signature.size());
  task.SerializeWithCachedSizes(&out);
  out.WriteRaw(signature.data(), static_cast<int>(signature.size()));
  tag(worker::LocalTask::kRecordFieldNumber);
  out.WriteVarint64(recordBytes.size());
  out.WriteRaw(recordBytes.data(), static_cast<int>(recordBytes.size()));
  return !out.HadError();
}

} // namespace

LocalAgentLink::LocalAgentLink(std::string agentId, UniqueFd socket,
                               OpenBlobFn openBlob)
    : id(std::move(agentId)), link(std::move(socket)),
      openBlob(std::move(openBlob)) {
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

bool LocalAgentLink::send(const v1::Task &task, const TaskRecord &record,
                          const TensorFiles &inputFiles,
                          const LinkExtras &extras) {
  // The direct channel's socket takes a place among the frame's files; a
  // task whose input files fill the frame goes without one.
  int channel = inputFiles.size() < FramedSocket::kMaxFiles
                    ? extras.directChannel
                    : -1;
  size_t maxFiles = FramedSocket::kMaxFiles - (channel >= 0);
  if (inputFiles.size() > maxFiles)
    return false;
  worker::LocalTask local; // file_inputs here; the task is written below
  local.set_caller_maps_outputs(extras.callerMapsOutputs);
  std::vector<UniqueFd> opened;
  std::vector<int> files;
  auto given = inputFiles.begin();
  for (int i = 0; i < task.inputs_size(); ++i) {
    if (given != inputFiles.end() && given->first == i) {
      local.add_file_inputs(static_cast<uint32_t>(i));
      files.push_back(given->second.get());
      ++given;
      continue;
    }
    const v1::Tensor &input = task.inputs(i);
    // Past the frame's file limit the agent fetches the rest (the given
    // files, at most the limit, always go).
    if (input.payload_case() != v1::Tensor::kBlob ||
        files.size() + static_cast<size_t>(inputFiles.end() - given) >=
            maxFiles)
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
  if (given != inputFiles.end())
    return false; // a file for an input the task does not have
  if (channel >= 0) {
    local.set_direct_channel(true);
    files.push_back(channel);
  }
  std::string bytes;
  if (!local.SerializeToString(&bytes) || !appendTask(task, record, bytes))
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

absl::StatusOr<AgentAnswer>
LocalAgentLink::answerOf(const std::string &frame,
                         std::vector<UniqueFd> &files) {
  worker::LocalResult local;
  // No task id to answer: the link is broken, like a malformed frame.
  if (!local.ParseFromString(frame))
    return absl::DataLossError("a result frame that is not a LocalResult");
  AgentAnswer answer{std::move(*local.mutable_result()), {},
                     local.direct_channel_open()};
  v1::TaskResult &result = answer.result;
  absl::Status named = absl::OkStatus();
  if (local.file_outputs_size() != static_cast<int>(files.size()))
    named = absl::InternalError(absl::StrCat(
        "agent '", id, "' named ", local.file_outputs_size(),
        " output files and passed ", files.size()));
  for (int i = 0; named.ok() && i < local.file_outputs_size(); ++i) {
    int index = static_cast<int>(local.file_outputs(i));
    int previous = answer.outputFiles.empty() ? -1 : answer.outputFiles.back().first;
    if (index >= result.outputs_size() || index <= previous ||
        result.outputs(index).payload_case() !=
            v1::Tensor::PAYLOAD_NOT_SET) {
      named = absl::InternalError(absl::StrCat(
          "agent '", id, "' passed a file for output ", index, " of ",
          result.outputs_size(),
          " (out of order, repeated, or an output with a payload)"));
      break;
    }
    answer.outputFiles.emplace_back(index, std::move(files[i]));
  }
  if (!named.ok()) {
    answer.outputFiles.clear();
    result.clear_outputs();
    result.set_code(static_cast<int32_t>(named.code()));
    result.set_message(std::string(named.message()));
  }
  return answer;
}

void LocalAgentLink::readLoop() {
  std::string frame;
  std::vector<UniqueFd> files;
  while (true) {
    absl::Status received = link.receive(frame, files);
    absl::StatusOr<AgentAnswer> result =
        received.ok() ? answerOf(frame, files)
                      : absl::StatusOr<AgentAnswer>(received);
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
