//===- TaskRunner.cpp - one Task in, one TaskResult out -------------------===//
//
// This file implements TaskRunner: validation, blob resolution, loading,
// running and returning outputs, with every failure turned into a result.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/TaskRunner.h"

#include "kiln/common/Digest.h"
#include "kiln/common/SealedFile.h"
#include "kiln/common/Status.h"
#include "kiln/common/SymbolicSizes.h"
#include "kiln/common/TensorTypes.h"

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include "kiln/common/Logging.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include <unistd.h>

namespace kiln::agent {
namespace {

using Clock = std::chrono::steady_clock;

/// The index in "<agent id>/<index>"; 0 when the id carries none.
int deviceIndex(const std::string &deviceId) {
  size_t slash = deviceId.rfind('/');
  int index = 0;
  if (slash == std::string::npos ||
      !absl::SimpleAtoi(deviceId.substr(slash + 1), &index) || index < 0)
    return 0;
  return index;
}

int64_t microsSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() -
                                                               start)
      .count();
}

absl::Status checkArgument(const v1::ManifestArgument &argument,
                           absl::string_view role, int index) {
  absl::StatusOr<int64_t> size = byteSize(argument.type());
  if (!size.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("manifest ", role, " ", index, " ('", argument.name(),
                     "'): ", size.status().message()));
  return absl::OkStatus();
}

} // namespace

absl::Status checkParameters(const Digests &parameters,
                             const v1::ExecutableManifest &manifest) {
  if (parameters.size() != manifest.parameters_size())
    return absl::InvalidArgumentError(
        absl::StrCat("task has ", parameters.size(),
                     " parameters, manifest wants ",
                     manifest.parameters_size()));
  for (int i = 0; i < parameters.size(); ++i) {
    const v1::Digest &digest = parameters[i];
    // The context string only on failure: hundreds of parameters a call.
    if (absl::Status valid = validateDigest(digest); !valid.ok())
      return annotate(valid, absl::StrCat("parameter ", i));
    int64_t want = *byteSize(manifest.parameters(i).type());
    if (digest.size_bytes() != want)
      return absl::InvalidArgumentError(absl::StrCat(
          "parameter ", i, " ('", manifest.parameters(i).name(), "') is ",
          formatDigest(digest), " but ",
          formatType(manifest.parameters(i).type()), " needs ", want,
          " bytes"));
  }
  return absl::OkStatus();
}

/// `manifest` with its symbols bound from the task's input types.
absl::StatusOr<BoundManifest> bindTask(const v1::Task &task,
                                       const v1::ExecutableManifest &manifest) {
  std::vector<const v1::TensorType *> inputs;
  for (const v1::Tensor &input : task.inputs())
    inputs.push_back(&input.type());
  BoundManifest bound;
  ASSIGN_OR_RETURN(bound.manifest, bindManifest(manifest, inputs, &bound.symbolValues));
  return bound;
}

absl::Status validateTask(const v1::Task &task, std::string_view kind,
                          const LocalFiles *files, BoundManifest *bound) {
  return validateTask(task, task.record(), kind, files, bound);
}

absl::Status validateTask(const v1::Task &task,
                          const v1::ExecutableRecord &record,
                          std::string_view kindView, const LocalFiles *files,
                          BoundManifest *bound) {
  std::string kind(kindView);
  if (task.task_id().empty())
    return absl::InvalidArgumentError("task has no task_id");
  if (!record.has_manifest())
    return absl::InvalidArgumentError("task carries no executable record");
  std::optional<BoundManifest> boundHere;
  if (record.manifest().symbols_size() > 0) {
    if (task.inputs_size() != record.manifest().inputs_size())
      return absl::InvalidArgumentError(absl::StrCat(
          "task has ", task.inputs_size(), " inputs, manifest wants ",
          record.manifest().inputs_size()));
    ASSIGN_OR_RETURN(boundHere, bindTask(task, record.manifest()));
  }
  const v1::ExecutableManifest &manifest =
      boundHere ? boundHere->manifest : record.manifest();
  if (!manifest.target().empty() && manifest.target() != kind)
    return absl::FailedPreconditionError(
        absl::StrCat("executable was built for target '", manifest.target(),
                     "' but this agent runs '", kind, "'"));
  if (manifest.entry_symbol().empty())
    return absl::InvalidArgumentError("manifest names no entry_symbol");
  RETURN_IF_ERROR(annotate(validateDigest(record.artifact()),
                           "artifact digest"));
  for (int i = 0; i < manifest.parameters_size(); ++i)
    RETURN_IF_ERROR(checkArgument(manifest.parameters(i), "parameter", i));
  for (int i = 0; i < manifest.inputs_size(); ++i)
    RETURN_IF_ERROR(checkArgument(manifest.inputs(i), "input", i));
  for (int i = 0; i < manifest.outputs_size(); ++i)
    RETURN_IF_ERROR(checkArgument(manifest.outputs(i), "output", i));

  // A set's parameters are checked once it is read (checkParameters).
  if (task.has_parameter_set()) {
    if (task.parameters_size() != 0)
      return absl::InvalidArgumentError(
          "task has parameters and a parameter_set");
    RETURN_IF_ERROR(
        annotate(validateDigest(task.parameter_set()), "parameter_set"));
  } else {
    RETURN_IF_ERROR(checkParameters(task.parameters(), manifest));
  }

  if (task.inputs_size() != manifest.inputs_size())
    return absl::InvalidArgumentError(
        absl::StrCat("task has ", task.inputs_size(), " inputs, manifest wants ",
                     manifest.inputs_size()));
  for (int i = 0; i < task.inputs_size(); ++i) {
    const v1::Tensor &input = task.inputs(i);
    const v1::ManifestArgument &argument = manifest.inputs(i);
    if (!sameType(input.type(), argument.type()))
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, " ('", argument.name(), "') is ",
          formatType(input.type()), ", manifest wants ",
          formatType(argument.type())));
    int64_t want = *byteSize(argument.type());
    int64_t have;
    switch (input.payload_case()) {
    case v1::Tensor::kHeld:
      have = want; // its type is checked against the held tensor's
      break;
    case v1::Tensor::kData:
      have = static_cast<int64_t>(input.data().size());
      break;
    case v1::Tensor::kBlob:
      if (absl::Status valid = validateDigest(input.blob()); !valid.ok())
        return annotate(valid, absl::StrCat("input ", i, " blob"));
      have = input.blob().size_bytes();
      break;
    default:
      // In a file (checked when mapped), or: proto3 drops empty bytes, so an
      // unset payload is a zero-byte tensor.
      have = 0;
      if (files) {
        for (const auto &[index, file] : files->inputs)
          if (index == i)
            have = want;
        for (const auto &[index, copy] : files->inputCopies)
          if (index == i)
            have = copy.size();
      }
      break;
    }
    if (have != want)
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " ('", argument.name(), "') has ", have,
                       " bytes, ", formatType(argument.type()), " needs ",
                       want));
  }
  RETURN_IF_ERROR(keptOutputMask(task.keep_outputs(), manifest.outputs_size()).status());
  if (bound && boundHere)
    *bound = *std::move(boundHere);
  return absl::OkStatus();
}

void TaskRunner::setTaskVerifier(std::shared_ptr<const TaskVerifier> key) {
  std::lock_guard<std::mutex> lock(verifierMutex);
  verifier = std::move(key);
}

size_t TaskRunner::loadedExecutables() const {
  std::lock_guard<std::mutex> lock(loadMutex);
  return loaded.size();
}

absl::StatusOr<std::shared_ptr<LoadedExecutable>>
TaskRunner::getExecutable(const v1::Task &task,
                          const v1::ExecutableRecord &record,
                          v1::Timings &timings) {
  // Key by the executable digest when the daemon sent one, else by artifact.
  const std::string &key = task.executable().hash().empty()
                               ? record.artifact().hash()
                               : task.executable().hash();
  std::string signedMessage = taskSigningMessage(task.executable(), record);
  {
    std::lock_guard<std::mutex> lock(loadMutex);
    if (auto it = loaded.find(key); it != loaded.end() &&
                                    it->second.signedMessage == signedMessage &&
                                    it->second.signature == task.signature()) {
      recency.splice(recency.begin(), recency, it->second.position);
      return it->second.executable;
    }
  }
  // Nothing is fetched, let alone loaded, for a task kilnd did not sign.
  std::shared_ptr<const TaskVerifier> taskKey;
  {
    std::lock_guard<std::mutex> lock(verifierMutex);
    taskKey = verifier;
  }
  if (!taskKey)
    return absl::FailedPreconditionError(
        "this agent has no task key to verify tasks with: start it with "
        "--task-verify-key (the daemon's <cache-dir>/keys/"
        "task-public-key.pem), or connect it to a kilnd that sends its key");
  RETURN_IF_ERROR(taskKey->verify(task, record));
  {
    std::lock_guard<std::mutex> lock(loadMutex);
    if (auto it = loaded.find(key); it != loaded.end() &&
                                    it->second.signedMessage == signedMessage) {
      // Verified now, under another signature of the same code (a rotated
      // key): serve the loaded one and remember this signature.
      it->second.signature = task.signature();
      recency.splice(recency.begin(), recency, it->second.position);
      return it->second.executable;
    }
  }
  // A miss: fetch and load without the lock, so other tasks keep going. Two
  // tasks racing for the same executable both load it; the first one wins.
  Clock::time_point fetchStart = Clock::now();
  absl::StatusOr<std::filesystem::path> path =
      cache.ensure(record.artifact(), blobs);
  if (!path.ok())
    return annotate(path.status(),
                    absl::StrCat("fetching artifact ",
                                 formatDigest(record.artifact())));
  timings.set_fetch_us(timings.fetch_us() + microsSince(fetchStart));
  Clock::time_point loadStart = Clock::now();
  absl::StatusOr<std::shared_ptr<LoadedExecutable>> executable =
      backend.loadExecutable(record, *path);
  timings.set_load_us(microsSince(loadStart));
  if (!executable.ok())
    return annotate(executable.status(),
                    absl::StrCat("loading executable ",
                                 formatDigest(task.executable())));
  std::lock_guard<std::mutex> lock(loadMutex);
  if (auto it = loaded.find(key); it != loaded.end()) {
    if (it->second.signedMessage == signedMessage)
      return it->second.executable; // a racing task loaded it first
    // The same key for other code (a task without an executable digest):
    // the newly verified load replaces it.
    recency.erase(it->second.position);
    loaded.erase(it);
  }
  recency.push_front(key);
  loaded.emplace(key, LoadedEntry{*executable, recency.begin(),
                                  std::move(signedMessage), task.signature()});
  while (loaded.size() > maxLoaded) {
    loaded.erase(recency.back());
    recency.pop_back();
  }
  return *executable;
}

absl::StatusOr<std::shared_ptr<const v1::ParameterSet>>
TaskRunner::getParameterSet(const v1::Digest &digest) {
  {
    std::lock_guard<std::mutex> lock(setMutex);
    if (auto it = parameterSets.find(digest.hash()); it != parameterSets.end())
      return it->second;
  }
  std::string where = absl::StrCat("parameter_set ", formatDigest(digest));
  if (digest.size_bytes() > kMaxParameterSetBytes)
    return absl::InvalidArgumentError(absl::StrCat(
        where, " is ", digest.size_bytes(), " bytes; a set holds at most ",
        kMaxParameterSetBytes));
  absl::StatusOr<AlignedBuffer> bytes = cache.read(digest, blobs);
  if (!bytes.ok())
    return annotate(bytes.status(), where);
  auto set = std::make_shared<v1::ParameterSet>();
  if (!set->ParseFromArray(bytes->data(), static_cast<int>(bytes->size())))
    return absl::InvalidArgumentError(
        absl::StrCat(where, " is not a serialized kiln.v1.ParameterSet"));
  std::lock_guard<std::mutex> lock(setMutex);
  if (parameterSets.size() >= kMaxParameterSets)
    parameterSets.clear();
  parameterSets.emplace(digest.hash(), set);
  return std::shared_ptr<const v1::ParameterSet>(set);
}

absl::StatusOr<ResidentSet::Buffer>
TaskRunner::getParameter(const v1::Digest &digest) {
  if (ResidentSet::Buffer buffer = resident.lookup(digest.hash()))
    return buffer;
  ASSIGN_OR_RETURN(AlignedBuffer local, cache.read(digest, blobs));
  return resident.insert(
      digest.hash(), std::make_shared<const AlignedBuffer>(std::move(local)));
}

absl::StatusOr<AlignedBuffer> TaskRunner::decodeInput(const v1::Tensor &tensor,
                                                      const UniqueFd *file) {
  // kilnd verified the blob when it was written to its store and passed its
  // file over the link it made at spawn: mapped, not fetched or hashed again.
  if (file && tensor.payload_case() == v1::Tensor::kBlob)
    return AlignedBuffer::mapFile(file->get(), tensor.blob().size_bytes());
  // A co-located client's memfd, passed on by kilnd: sealed, so that nobody
  // can change the bytes or shrink the file under the mapping.
  if (file) {
    ASSIGN_OR_RETURN(int64_t size, byteSize(tensor.type()));
    RETURN_IF_ERROR(checkSealedTensorFile(file->get(), size));
    return AlignedBuffer::mapFile(file->get(), size);
  }
  if (tensor.payload_case() == v1::Tensor::kBlob)
    return fetchToMemory(tensor.blob(), blobs);
  return AlignedBuffer::copyOf(tensor.data());
}

absl::Status TaskRunner::runTask(const v1::Task &task,
                                 const v1::ExecutableRecord &record,
                                 v1::TaskResult &result, LocalFiles *files) {
  BoundManifest bound;
  RETURN_IF_ERROR(validateTask(task, record, backend.kind(), files, &bound));
  // This call's types: the record's, or with its symbols bound.
  bool symbolic = record.manifest().symbols_size() > 0;
  const v1::ExecutableManifest &manifest =
      symbolic ? bound.manifest : record.manifest();
  v1::Timings &timings = *result.mutable_timings();

  ASSIGN_OR_RETURN(std::shared_ptr<LoadedExecutable> executable,
                   getExecutable(task, record, timings));

  Clock::time_point fetchStart = Clock::now();
  const Digests *digests = &task.parameters();
  std::shared_ptr<const v1::ParameterSet> set;
  if (task.has_parameter_set()) {
    ASSIGN_OR_RETURN(set, getParameterSet(task.parameter_set()));
    RETURN_IF_ERROR(annotate(checkParameters(set->parameters(), manifest),
                             "parameter_set"));
    digests = &set->parameters();
  }
  // Resident ones in one turn of the set's lock; the others one by one.
  std::vector<ResidentSet::Buffer> parameters = resident.lookupAll(
      digests->size(),
      [digests](int i) -> const std::string & { return (*digests)[i].hash(); });
  std::vector<void *> parameterPointers;
  std::vector<uint64_t> parameterSerials;
  parameterPointers.reserve(parameters.size());
  parameterSerials.reserve(parameters.size());
  for (int i = 0; i < digests->size(); ++i) {
    ResidentSet::Buffer &found = parameters[static_cast<size_t>(i)];
    absl::StatusOr<ResidentSet::Buffer> parameter =
        found ? found : getParameter((*digests)[i]);
    if (!parameter.ok())
      return annotate(parameter.status(),
                      absl::StrCat("parameter ", i, " ('",
                                   manifest.parameters(i).name(), "')"));
    // The executable reads parameters only; the C ABI has no const.
    parameterPointers.push_back(const_cast<uint8_t *>((*parameter)->data()));
    // Resident parameters are never written: their serial names their bytes.
    parameterSerials.push_back((*parameter)->serial());
    found = *std::move(parameter);
  }
  std::vector<AlignedBuffer> inputs;
  // Over a local link, freed by the caller once the result is sent.
  absl::Cleanup deferInputs = [&inputs, files] {
    if (files)
      files->inputBuffers = std::move(inputs);
  };
  std::vector<HeldTensors::Buffer> heldInputs;
  std::vector<void *> inputPointers;
  for (int i = 0; i < task.inputs_size(); ++i) {
    if (task.inputs(i).payload_case() == v1::Tensor::kHeld) {
      std::string where =
          absl::StrCat("input ", i, " ('", manifest.inputs(i).name(), "')");
      absl::StatusOr<HeldTensors::Held> tensor = held.find(task.inputs(i).held());
      if (!tensor.ok())
        return annotate(tensor.status(), where);
      if (!sameType(tensor->type, manifest.inputs(i).type()))
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": the held tensor is ", formatType(tensor->type),
            ", the executable takes ", formatType(manifest.inputs(i).type())));
      // Executables never write their inputs; the C ABI has no const.
      inputPointers.push_back(const_cast<uint8_t *>(tensor->buffer->data()));
      heldInputs.push_back(std::move(tensor->buffer));
      continue;
    }
    const UniqueFd *file = nullptr;
    AlignedBuffer *copy = nullptr;
    if (files) {
      for (const auto &[index, fd] : files->inputs)
        if (index == i)
          file = &fd;
      for (auto &[index, bytes] : files->inputCopies)
        if (index == i &&
            task.inputs(i).payload_case() == v1::Tensor::PAYLOAD_NOT_SET)
          copy = &bytes;
    }
    // Sized by validateTask above.
    absl::StatusOr<AlignedBuffer> input =
        copy ? std::move(*copy) : decodeInput(task.inputs(i), file);
    if (!input.ok())
      return annotate(input.status(), absl::StrCat("input ", i, " ('",
                                                   manifest.inputs(i).name(),
                                                   "')"));
    inputs.push_back(std::move(*input));
    inputPointers.push_back(inputs.back().data());
  }
  timings.set_fetch_us(timings.fetch_us() + microsSince(fetchStart));

  std::vector<AlignedBuffer> outputs;
  std::vector<void *> outputPointers;
  int64_t outputBytes = 0;
  for (const v1::ManifestArgument &argument : manifest.outputs())
    outputBytes += *byteSize(argument.type());
  bool inlineOutputs = outputBytes <= kMaxInlineOutputBytes;
  // Outputs of data-dependent size are allocated at their largest and
  // trimmed after the run (kiln/common/SymbolicSizes.h): plain buffers,
  // never a file or the exchange buffer, whose sizes are fixed beforehand.
  const int dataDependent = dataDependentCount(record.manifest().symbols());
  // Large outputs over the local link: written by the executable straight
  // into memfds that kilnd maps. Small ones among them stay inline. For a
  // caller that maps them itself, mid-size ones go too.
  bool callerMaps = files && files->callerMapsOutputs;
  bool sharedOutputs = files && files->outputsAsFiles && dataDependent == 0 &&
                       (!inlineOutputs || callerMaps);
  // Past the inline limit, from 64 KiB for every caller; under it (only a
  // caller that maps files gets any), from 128 KiB.
  int64_t minShared = inlineOutputs ? kMinCallerFileBytes : kMinSharedOutputBytes;
  std::vector<bool> inlined;
  ASSIGN_OR_RETURN(std::vector<bool> kept,
                   keptOutputMask(task.keep_outputs(), manifest.outputs_size()));
  // A channel's exchange buffer takes outputs under its tensor limit that
  // fit its region, in order: their offsets, written after the run.
  std::vector<std::optional<uint64_t>> exchangeAt(manifest.outputs_size());
  uint64_t cursor = files ? files->exchangeBegin : 0;
  int64_t inlinedBytes = 0;
  for (int i = 0; i < manifest.outputs_size(); ++i) {
    int64_t size = *byteSize(manifest.outputs(i).type());
    if (files && files->exchange && !kept[i] && size > 0 && dataDependent == 0 &&
        size < ExchangeBuffer::kMaxTensorBytes)
      exchangeAt[i] = files->exchange->reserve(static_cast<uint64_t>(size),
                                               cursor, files->exchangeEnd);
    bool toExchange = exchangeAt[i].has_value();
    bool small = sharedOutputs &&
                 (toExchange || (size < minShared &&
                                    inlinedBytes + size <= kMaxInlineOutputBytes));
    inlinedBytes += small && !toExchange ? size : 0;
    inlined.push_back(sharedOutputs ? small : inlineOutputs);
    ASSIGN_OR_RETURN(AlignedBuffer output,
                     sharedOutputs && !small && !kept[i] && size > 0
                         ? outputSpares.take(size)
                         : AlignedBuffer::allocate(size));
    outputs.push_back(std::move(output));
    outputPointers.push_back(outputs.back().data());
  }

  // The values the executable computes for the data-dependent sizes.
  std::vector<int64_t> computed(static_cast<size_t>(dataDependent), -1);
  if (dataDependent > 0)
    outputPointers.push_back(computed.data());

  Clock::time_point runStart = Clock::now();
  absl::StatusOr<v1::DeviceCounters> ran =
      backend.run(*executable, CallBuffers{parameterPointers, inputPointers,
                                           outputPointers,
                                           deviceIndex(task.device_id()),
                                           parameterSerials, bound.symbolValues});
  timings.set_run_us(microsSince(runStart));
  RETURN_IF_ERROR(annotate(ran.status(), "running the executable"));
  *result.mutable_counters() = *ran;

  // Each output's type for this call: the manifest's, or with
  // data-dependent sizes the values the run computed, its bytes the front
  // of its buffer.
  std::vector<v1::TensorType> computedTypes;
  auto typeOf = [&](size_t i) -> const v1::TensorType & {
    return dataDependent > 0 ? computedTypes[i]
                             : manifest.outputs(static_cast<int>(i)).type();
  };
  if (dataDependent > 0) {
    std::vector<v1::TensorType> allocated;
    for (const v1::ManifestArgument &argument : manifest.outputs())
      allocated.push_back(argument.type());
    ASSIGN_OR_RETURN(computedTypes,
                     computedOutputTypes(record.manifest(), allocated, computed));
    result.mutable_data_dependent_sizes()->Assign(computed.begin(), computed.end());
    for (size_t i = 0; i < outputs.size(); ++i) {
      ASSIGN_OR_RETURN(int64_t size, byteSize(computedTypes[i]));
      if (static_cast<size_t>(size) == outputs[i].view().size())
        continue;
      ASSIGN_OR_RETURN(outputs[i], AlignedBuffer::copyOf(
                                       outputs[i].view().substr(0, static_cast<size_t>(size))));
    }
  }

  for (size_t i = 0; i < outputs.size(); ++i) {
    v1::Tensor *tensor = result.add_outputs();
    *tensor->mutable_type() = typeOf(i);
    if (kept[i])
      continue; // held below, last
    if (inlined[i]) {
      // Straight from the executable's buffer into a channel's exchange
      // buffer: one copy, no message bytes.
      if (exchangeAt[i]) {
        files->exchange->write(*exchangeAt[i], outputs[i].view());
        files->exchangeOutputs.emplace_back(static_cast<int>(i), *exchangeAt[i]);
        continue;
      }
      tensor->set_data(std::string(outputs[i].view()));
      continue;
    }
    if (sharedOutputs && outputs[i].file() >= 0 &&
        files->outputs.size() < FramedSocket::kMaxFiles) {
      UniqueFd shared(::dup(outputs[i].file()));
      if (!shared.valid())
        return absl::ResourceExhaustedError(absl::StrCat(
            "output ", i, ": cannot duplicate its memfd: ", std::strerror(errno)));
      files->outputs.emplace_back(static_cast<int>(i), std::move(shared));
      continue;
    }
    v1::Digest digest = digestOf(outputs[i].view());
    RETURN_IF_ERROR(annotate(blobs.write(digest, outputs[i].view()),
                             absl::StrCat("uploading output ", i)));
    *tensor->mutable_blob() = digest;
  }
  // Kept outputs last, all or none (the budget): a task that fails holds
  // nothing, since nobody would learn the handles.
  std::vector<std::pair<AlignedBuffer, v1::TensorType>> keeping;
  for (uint32_t index : task.keep_outputs())
    keeping.emplace_back(std::move(outputs[index]), typeOf(index));
  ASSIGN_OR_RETURN(std::vector<std::string> handles,
                   held.holdAll(std::move(keeping)));
  for (int i = 0; i < task.keep_outputs_size(); ++i)
    result.mutable_outputs(static_cast<int>(task.keep_outputs(i)))
        ->set_held(handles[i]);
  return absl::OkStatus();
}

v1::TaskResult TaskRunner::run(const v1::Task &task, LocalFiles *files) {
  return run(task, task.record(), files);
}

v1::TaskResult TaskRunner::run(const v1::Task &task,
                               const v1::ExecutableRecord &record,
                               LocalFiles *files) {
  // Every line logged while this task runs names kilnd's request id.
  ScopedRequestId logContext(task.request_id());
  v1::TaskResult result;
  result.set_task_id(task.task_id());
  // The caller is done with its releases whatever happens: those this task
  // does not read go first (their bytes count against the budget that its
  // own kept outputs need), the others after it.
  absl::flat_hash_set<std::string> read;
  for (const v1::Tensor &input : task.inputs())
    if (input.payload_case() == v1::Tensor::kHeld)
      read.insert(input.held());
  for (const std::string &handle : task.release())
    if (!read.contains(handle))
      held.release(handle);
  absl::Status status = runTask(task, record, result, files);
  for (const std::string &handle : task.release())
    if (read.contains(handle))
      held.release(handle);
  if (!status.ok()) {
    result.clear_outputs();
    if (files) {
      files->outputs.clear();
      files->exchangeOutputs.clear();
    }
    result.set_code(static_cast<int32_t>(status.code()));
    result.set_message(std::string(status.message()));
    spdlog::warn("task {} failed: {}", task.task_id(), status.ToString());
  } else {
    spdlog::debug("task {} done: fetch {} us, load {} us, run {} us",
                  task.task_id(),
                  result.timings().fetch_us(), result.timings().load_us(),
                  result.timings().run_us());
  }
  return result;
}

} // namespace kiln::agent
