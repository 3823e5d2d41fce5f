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

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/eventfd.h>
#include <unistd.h>

namespace kiln::server {

namespace {

/// How long a reader sleeps before it looks again at outcomes that may
/// have been made ready without a frame (readUntil).
constexpr auto kReadSlice = std::chrono::milliseconds(20);

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
      openBlob(std::move(openBlob)),
      readNeeded(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (!readNeeded.valid()) {
    spdlog::error("local link to agent '{}': eventfd: {}; its watcher reads "
                  "every answer", id, std::strerror(errno));
    reading = true; // the watcher's for good, before any caller can look
  }
  watcher = std::thread([this] { watchLoop(); });
}

LocalAgentLink::~LocalAgentLink() {
  // Never on the watcher thread: connections hold the link weakly
  // (WeakAgentLink), so the connection the watcher holds for a moment never
  // owns it. A caller in await() holds it, and has left the reading by the
  // time it lets go.
  link.shutdown();
  if (watcher.joinable())
    watcher.join();
}

absl::Status LocalAgentLink::send(const v1::Task &task, const TaskRecord &record,
                                  const TensorFiles &inputFiles,
                                  const LinkExtras &extras,
                                  std::chrono::steady_clock::time_point deadline) {
  // The direct channel's socket takes a place among the frame's files; a
  // task whose input files fill the frame goes without one.
  int channel = inputFiles.size() < FramedSocket::kMaxFiles
                    ? extras.directChannel
                    : -1;
  size_t maxFiles = FramedSocket::kMaxFiles - (channel >= 0);
  if (inputFiles.size() > maxFiles)
    return absl::UnavailableError(absl::StrCat(
        "a task with ", inputFiles.size(), " input files; a frame takes ",
        maxFiles));
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
    return absl::UnavailableError(absl::StrCat(
        "a file for input ", given->first, ", which task ", task.task_id(),
        " does not have, or not in order"));
  if (channel >= 0) {
    local.set_direct_channel(true);
    files.push_back(channel);
  }
  std::string bytes;
  if (!local.SerializeToString(&bytes) || !appendTask(task, record, bytes))
    return absl::UnavailableError(
        absl::StrCat("cannot serialize task ", task.task_id()));
  // Owed from before the frame goes: an answer is never read uncounted.
  {
    std::lock_guard<std::mutex> lock(readMutex);
    ++owed;
  }
  absl::Status sent = link.send(bytes, files, deadline);
  if (!sent.ok()) {
    spdlog::warn("local link to agent '{}': {}", id,
                 std::string(sent.message()));
    std::lock_guard<std::mutex> lock(readMutex);
    if (owed > 0)
      --owed;
  }
  return sent;
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

std::future_status
LocalAgentLink::await(std::future<TaskOutcome> &outcome,
                      std::chrono::steady_clock::time_point deadline) {
  auto ready = [&outcome] {
    return outcome.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  };
  std::unique_lock<std::mutex> lock(readMutex);
  if (ready())
    return std::future_status::ready;
  // Another thread reads (a caller, or the watcher): it hands this answer
  // over (the promise wakes this caller alone), or, leaving with answers
  // owed, hands the reading to the watcher, which reads until none is.
  // Nothing more will be read once the link ended: the end failed the
  // tasks in flight.
  if (reading || ended) {
    lock.unlock();
    return outcome.wait_until(deadline);
  }
  reading = true;
  lock.unlock();
  bool done = readUntil(outcome, deadline);
  lock.lock();
  reading = false;
  handReadingOn();
  lock.unlock();
  if (ready())
    return std::future_status::ready;
  // The link ended (done) and failed the tasks of the connection bound
  // then, which need not be this task's (unbound as its agent left): its
  // outcome comes when its connection closes, or the deadline passes.
  return done ? outcome.wait_until(deadline) : std::future_status::timeout;
}

void LocalAgentLink::handReadingOn() {
  if (watcherDraining) {
    readingFree.notify_one();
    return;
  }
  // Answers still owed, to callers waiting or to none (their deadlines
  // passed): the watcher reads them, so the agent never blocks sending.
  uint64_t one = 1;
  if (owed > 0)
    (void)::write(readNeeded.get(), &one, sizeof one);
}

bool LocalAgentLink::readUntil(std::future<TaskOutcome> &outcome,
                               std::chrono::steady_clock::time_point deadline) {
  // Sleeps in slices: an outcome can also be made ready without a frame
  // (the connection closed when the agent registered again), and a reader
  // that slept until its deadline would not see it.
  while (outcome.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline)
      return false;
    // A frame is read whole once it starts: an agent writes each at once.
    if (link.waitReadable(std::min(deadline, now + kReadSlice)) && !readOne())
      return true;
  }
  return true;
}

void LocalAgentLink::watchLoop() {
  if (!readNeeded.valid()) {
    // Nothing can wake the watcher to read: it reads every answer, as a
    // dedicated reader (reading was set for it), and callers only wait.
    while (readOne()) {
    }
    return;
  }
  while (!ended) {
    if (!link.waitHangUp(readNeeded.get())) {
      uint64_t count;
      (void)::read(readNeeded.get(), &count, sizeof count);
      {
        std::lock_guard<std::mutex> lock(readMutex);
        // Taken by a caller meanwhile (who hands it back if it leaves
        // answers owed), or nothing left to read.
        if (reading || owed == 0)
          continue;
        reading = true;
      }
      readWhileOwed();
      continue;
    }
    // The agent is gone (or shutdown() was called): what it answered
    // before is read, then the end fails the tasks still in flight.
    std::unique_lock<std::mutex> lock(readMutex);
    watcherDraining = true;
    readingFree.wait(lock, [this] { return !reading; });
    watcherDraining = false;
    reading = true;
    lock.unlock();
    while (readOne()) {
    }
    lock.lock();
    reading = false;
    return;
  }
}

void LocalAgentLink::readWhileOwed() {
  // No slices: every answer this waits for is owed, and a hang-up or
  // shutdown() ends the receive.
  while (true) {
    bool open = readOne();
    std::lock_guard<std::mutex> lock(readMutex);
    if (!open || owed == 0) {
      reading = false;
      handReadingOn();
      return;
    }
  }
}

bool LocalAgentLink::readOne() {
  absl::Status received = link.receive(frame, files);
  absl::StatusOr<AgentAnswer> result =
      received.ok() ? answerOf(frame, files)
                    : absl::StatusOr<AgentAnswer>(received);
  files.clear();
  std::shared_ptr<AgentConnection> connection;
  {
    std::lock_guard<std::mutex> lock(bindMutex);
    connection = bound.lock();
  }
  if (!result.ok()) {
    if (ended.exchange(true))
      return false;
    received = result.status();
    if (!absl::IsUnavailable(received))
      spdlog::error("local link to agent '{}': {}", id,
                    std::string(received.message()));
    // Nothing more will be read: later sends fail at once, and the tasks
    // in flight fail now instead of at their deadlines.
    link.shutdown();
    if (connection)
      connection->close(absl::UnavailableError(absl::StrCat(
          "the local link to agent '", id, "' ended: ", received.message())));
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(readMutex);
    if (owed > 0)
      --owed;
    else
      spdlog::warn("agent '{}' sent an answer more than it owed over its "
                   "local link", id);
  }
  if (!connection || !connection->complete(*std::move(result)))
    spdlog::warn("agent '{}' answered a task that nobody awaits over its "
                 "local link (deadline passed, or it reconnected)",
                 id);
  return true;
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
