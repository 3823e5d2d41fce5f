//===- LocalLinkServer.cpp - tasks from kilnd over the local link ---------===//
//
// This file implements LocalLinkServer: read a frame, hand the reading on,
// run its task, answer with the result and the output memfds.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/LocalLinkServer.h"

#include "kiln/common/Logging.h"
#include "kiln/agent/OutputFiles.h"
#include "kiln/common/FrameFiles.h"
#include "kiln/worker/local_link.pb.h"

#include "absl/strings/str_cat.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>

namespace kiln::agent {

namespace {
/// A server thread's frame buffer is kept up to this size between tasks.
constexpr size_t kKeptFrameBytes = 4 << 20;
} // namespace

LocalLinkServer::LocalLinkServer(UniqueFd socket, TaskRunner &runner,
                                 unsigned threads, std::function<void()> onEnd,
                                 DirectPoll directPoll)
    : link(std::move(socket)), runner(runner),
      runSlots(static_cast<std::ptrdiff_t>(std::max(threads, 1u))),
      directChannels(runner, &runSlots, DirectChannels::kDefaultLimit,
                     directPoll),
      onEnd(std::move(onEnd)) {
  spdlog::info("tasks come over the local link from kilnd (tensors as files)");
  for (unsigned i = 0; i < std::max(threads, 1u); ++i)
    servers.emplace_back([this] { serveLoop(); });
}

LocalLinkServer::~LocalLinkServer() {
  stopping = true;
  link.shutdown(); // every read fails now; the tasks running finish
  for (std::thread &server : servers)
    server.join();
}

void LocalLinkServer::serveLoop() {
  std::string frame;
  std::vector<UniqueFd> files;
  while (true) {
    absl::Status received;
    {
      std::lock_guard<std::mutex> reading(readMutex);
      received = link.receive(frame, files);
    } // the next frame is another thread's to read, while this one runs
    if (received.ok()) {
      serve(frame, files);
      files.clear();
      // Each thread keeps its buffer for the next frame, but not one grown
      // for a rare large task.
      if (frame.capacity() > kKeptFrameBytes)
        std::string().swap(frame);
      continue;
    }
    // Every thread ends here once the link is gone; one of them reports it.
    if (stopping || ended.exchange(true))
      return;
    spdlog::warn("local link to kilnd ended: {}; the agent stops (kilnd "
                 "starts it again with a new link)",
                 std::string(received.message()));
    link.shutdown();
    if (onEnd)
      onEnd();
    return;
  }
}

void LocalLinkServer::serve(const std::string &frame,
                            std::vector<UniqueFd> &files) {
  worker::LocalTask local;
  worker::LocalResult reply;
  LocalFiles tensors;
  tensors.outputsAsFiles = true;
  v1::TaskResult &result = *reply.mutable_result();
  if (!local.ParseFromString(frame)) {
    // No task id to answer: end the link, so that kilnd fails the tasks in
    // flight at once (and restarts this agent) instead of at their deadlines.
    spdlog::error("local link: a frame that is not a LocalTask; ending the link");
    link.shutdown();
    return;
  }
  const v1::Task &task = local.task();
  tensors.callerMapsOutputs = local.caller_maps_outputs();
  // A direct channel's socket comes last, after the input files.
  UniqueFd channel;
  if (local.direct_channel() && !files.empty()) {
    channel = std::move(files.back());
    files.pop_back();
  }
  absl::StatusOr<IndexedFiles> paired =
      pairFrameFiles(local.file_inputs(), task.inputs_size(), files);
  bool consistent = local.direct_channel() == channel.valid() && paired.ok();
  if (consistent)
    for (const auto &[index, file] : *paired)
      consistent = consistent &&
                   task.inputs(index).payload_case() != v1::Tensor::kData;
  if (consistent)
    tensors.inputs = *std::move(paired);
  std::shared_ptr<const v1::ExecutableRecord> record;
  if (!consistent) {
    result.set_task_id(task.task_id());
    result.set_code(static_cast<int32_t>(absl::StatusCode::kInternal));
    result.set_message(absl::StrCat(
        "local link: task ", task.task_id(), " names ", local.file_inputs_size(),
        " input files and carried ", files.size(),
        ", or names inputs out of order or one with inline data, or a direct "
        "channel without its socket"));
  } else if (local.record().empty()) {
    RunSlot slot(&runSlots);
    result = runner.run(task, &tensors);
    if (channel.valid())
      record = std::make_shared<const v1::ExecutableRecord>(task.record());
  } else if (absl::StatusOr<std::shared_ptr<const v1::ExecutableRecord>> found =
                 records.get(local.record());
             found.ok()) {
    record = *std::move(found);
    RunSlot slot(&runSlots);
    result = runner.run(task, *record, &tensors);
  } else {
    result.set_task_id(task.task_id());
    result.set_code(static_cast<int32_t>(found.status().code()));
    result.set_message(std::string(found.status().message()));
  }
  std::vector<int> outputFiles;
  sealOutputFiles(tensors, result, *reply.mutable_file_outputs(), outputFiles);
  // kilnd asks only for calls a channel can repeat (a static manifest, no
  // held tensors), checked here too; a task that failed opens none.
  if (channel.valid() && result.code() == 0 && record &&
      record->manifest().symbols_size() == 0 &&
      task.keep_outputs_size() == 0 && task.release_size() == 0)
    reply.set_direct_channel_open(
        directChannels.open(std::move(channel), task, std::move(record)));
  std::string bytes;
  if (!reply.SerializeToString(&bytes)) {
    spdlog::error("local link: cannot serialize the result of task {}",
                  task.task_id());
    return;
  }
  if (absl::Status sent = link.send(bytes, outputFiles); !sent.ok())
    spdlog::warn("could not return the result of task {}: {}", task.task_id(),
                 std::string(sent.message()));
}

} // namespace kiln::agent
