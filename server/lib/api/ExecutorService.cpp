//===- ExecutorService.cpp - kiln.v1.Executor -----------------------------===//
//
// This file implements ExecutorService: manifest checks, then scheduling on a
// device of the executable's target and checking what the agent returned.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/ExecutorService.h"
#include "kiln/server/api/ParsedUnary.h"

#include "kiln/common/Digest.h"
#include "kiln/common/SealedFile.h"
#include "kiln/common/Status.h"
#include "kiln/common/SymbolicSizes.h"
#include "kiln/common/TensorTypes.h"
#include "kiln/server/store/CompileCache.h"
#include "kiln/server/api/GrpcStatus.h"
#include "kiln/server/api/RequestScope.h"

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <spdlog/spdlog.h>

#include <vector>

namespace kiln::server {

namespace {

using Arguments = google::protobuf::RepeatedPtrField<v1::ManifestArgument>;
using Digests = google::protobuf::RepeatedPtrField<v1::Digest>;

/// Checks one tensor's type and payload against its manifest slot. `file`
/// (-1: none) holds the bytes of a tensor without a payload.
absl::Status checkTensor(const v1::Tensor &tensor,
                         const v1::ManifestArgument &expected,
                         absl::string_view role, int index, int file,
                         std::vector<std::string> &missing,
                         const ContentStore &store) {
  std::string where =
      absl::StrCat(role, " ", index, " ('", expected.name(), "')");
  if (!sameType(tensor.type(), expected.type()))
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": expected ", formatType(expected.type()),
                     ", got ", formatType(tensor.type())));
  ASSIGN_OR_RETURN(int64_t size, byteSize(expected.type()));
  if (file >= 0) {
    if (tensor.payload_case() != v1::Tensor::PAYLOAD_NOT_SET)
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": a file was passed for it, and it has a payload too"));
    if (absl::Status sealed = checkSealedTensorFile(file, size); !sealed.ok())
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", sealed.message()));
    return absl::OkStatus();
  }
  switch (tensor.payload_case()) {
  case v1::Tensor::kData:
    if (static_cast<int64_t>(tensor.data().size()) != size)
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", formatType(expected.type()), " needs ",
                       size, " bytes, got ", tensor.data().size()));
    return absl::OkStatus();
  case v1::Tensor::kBlob:
    RETURN_IF_ERROR(validateDigest(tensor.blob()));
    if (tensor.blob().size_bytes() != size)
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", formatType(expected.type()), " needs ",
                       size, " bytes, blob has ", tensor.blob().size_bytes()));
    if (!store.contains(tensor.blob()))
      missing.push_back(absl::StrCat(where, " ", formatDigest(tensor.blob())));
    return absl::OkStatus();
  case v1::Tensor::kHeld:
    return absl::OkStatus(); // placeHeldTensors checks it
  default:
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": tensor has neither data nor blob"));
  }
}

/// The daemon never passes on outputs that do not match the manifest.
/// Outputs in `files` (sizes checked with their seals) have no payload.
absl::Status checkOutputs(const v1::TaskResult &result,
                          const Arguments &expected, const TensorFiles &files,
                          const std::vector<bool> &kept) {
  auto inFile = [&files](int index) {
    for (const auto &[output, file] : files)
      if (output == index)
        return true;
    return false;
  };
  if (result.outputs_size() != expected.size())
    return absl::InternalError(
        absl::StrCat("device returned ", result.outputs_size(),
                     " outputs; the manifest lists ", expected.size()));
  for (int i = 0; i < expected.size(); ++i) {
    const v1::Tensor &output = result.outputs(i);
    absl::StatusOr<int64_t> size = byteSize(expected[i].type());
    // A kept output comes back as a handle, and only a kept one does.
    bool keep = static_cast<size_t>(i) < kept.size() && kept[i];
    if (keep != (output.payload_case() == v1::Tensor::kHeld))
      return absl::InternalError(absl::StrCat(
          "device returned output ", i, " ('", expected[i].name(), "') ",
          keep ? "with its bytes; the call asked the device to keep it"
               : "as a held tensor; the call did not ask to keep it"));
    bool sizeOk =
        keep        ? !output.held().empty()
        : inFile(i) ? output.payload_case() == v1::Tensor::PAYLOAD_NOT_SET
        : output.payload_case() == v1::Tensor::kBlob
            ? size.ok() && output.blob().size_bytes() == *size
            : size.ok() &&
                  static_cast<int64_t>(output.data().size()) == *size;
    if (!sameType(output.type(), expected[i].type()) || !sizeOk)
      return absl::InternalError(absl::StrCat(
          "device returned output ", i, " ('", expected[i].name(), "') as ",
          formatType(output.type()), "; the manifest says ",
          formatType(expected[i].type())));
  }
  return absl::OkStatus();
}

/// `outputs` (this call's bound output types) at the data-dependent sizes
/// the run computed (TaskResult.data_dependent_sizes), each checked against
/// its range.
absl::Status withComputedSizes(const v1::ExecutableManifest &manifest,
                               const v1::TaskResult &result, Arguments &outputs) {
  std::vector<v1::TensorType> bound;
  for (const v1::ManifestArgument &output : outputs)
    bound.push_back(output.type());
  absl::StatusOr<std::vector<v1::TensorType>> computed = computedOutputTypes(
      manifest, bound,
      std::span<const int64_t>(result.data_dependent_sizes().data(),
                               static_cast<size_t>(result.data_dependent_sizes_size())));
  if (!computed.ok())
    return computed.status().code() == absl::StatusCode::kInvalidArgument
               ? computed.status()
               : absl::InternalError(absl::StrCat(
                     "device returned data-dependent sizes kilnd cannot use: ",
                     computed.status().message()));
  for (int i = 0; i < outputs.size(); ++i)
    *outputs.Mutable(i)->mutable_type() = std::move((*computed)[static_cast<size_t>(i)]);
  return absl::OkStatus();
}

/// `manifest` as this call sees it: its symbols bound from the request's
/// input types (a held input's from the index) and every type concrete.
absl::StatusOr<v1::ExecutableManifest>
bindRequest(const v1::ExecuteRequest &request,
            const v1::ExecutableManifest &manifest, const HeldTensorIndex &held) {
  if (request.inputs_size() != manifest.inputs_size())
    return absl::InvalidArgumentError(
        absl::StrCat("executable takes ", manifest.inputs_size(),
                     " inputs, got ", request.inputs_size()));
  std::vector<const v1::TensorType *> inputs;
  std::vector<v1::TensorType> heldTypes(request.inputs_size());
  for (int i = 0; i < request.inputs_size(); ++i) {
    const v1::Tensor &input = request.inputs(i);
    if (input.payload_case() == v1::Tensor::kHeld) {
      absl::StatusOr<HeldTensorIndex::Entry> entry = held.find(input.held());
      if (!entry.ok())
        return annotate(entry.status(), absl::StrCat("input ", i, " ('",
                                                     manifest.inputs(i).name(), "')"));
      heldTypes[i] = entry->type;
      inputs.push_back(&heldTypes[i]);
    } else {
      inputs.push_back(&input.type());
    }
  }
  return kiln::bindManifest(manifest, inputs);
}

} // namespace

absl::StatusOr<std::string>
ExecutorService::placeHeldTensors(const v1::ExecuteRequest &request,
                                  const v1::ExecutableManifest &manifest) const {
  RETURN_IF_ERROR(
      keptOutputMask(request.keep_outputs(), manifest.outputs_size()).status());
  std::string device;
  int deviceInput = -1;
  for (int i = 0; i < request.inputs_size(); ++i) {
    const v1::Tensor &input = request.inputs(i);
    if (input.payload_case() != v1::Tensor::kHeld)
      continue;
    std::string where =
        absl::StrCat("input ", i, " ('", manifest.inputs(i).name(), "')");
    absl::StatusOr<HeldTensorIndex::Entry> entry = held.find(input.held());
    if (!entry.ok())
      return annotate(entry.status(), where);
    if (entry->kind != manifest.target())
      return absl::InvalidArgumentError(absl::StrCat(
          where, " is held by ", entry->kind, " device ", entry->deviceId,
          "; this executable runs on ", manifest.target(), " devices"));
    if (!sameType(entry->type, manifest.inputs(i).type()))
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": the held tensor is ", formatType(entry->type),
          ", the executable takes ", formatType(manifest.inputs(i).type())));
    if (deviceInput >= 0 && entry->deviceId != device)
      return absl::InvalidArgumentError(absl::StrCat(
          where, " is held by device ", entry->deviceId, " and input ",
          deviceInput, " by ", device, "; one call runs on one device"));
    device = entry->deviceId;
    deviceInput = i;
  }
  return device;
}

ExecutorService::ExecutorService(ContentStore &store,
                                 const ExecutableNamespace &executables,
                                 TaskRecords &taskRecords, Scheduler &scheduler,
                                 std::chrono::milliseconds executeTimeout,
                                 DrainGate &gate, ServerMetrics &metrics,
                                 const AccessPolicy &access)
    : store(store), executables(executables), taskRecords(taskRecords),
      scheduler(scheduler), executeTimeout(executeTimeout),
      gate(gate), metrics(metrics), access(access) {}

absl::StatusOr<std::shared_ptr<const v1::ExecutableRecord>>
ExecutorService::validate(const v1::ExecuteRequest &request,
                          const TensorFiles &inputFiles,
                          std::optional<v1::ExecutableManifest> *bound) const {
  RETURN_IF_ERROR(validateDigest(request.executable()));
  // Only what kilnd compiled is an executable: an uploaded blob under the
  // digest (a hand-made record naming an uploaded object) is never read.
  absl::StatusOr<std::shared_ptr<const v1::ExecutableRecord>> record =
      executables.contains(request.executable())
          ? records.get(request.executable())
          : absl::NotFoundError("not an executable kilnd made");
  if (record.status().code() == absl::StatusCode::kNotFound)
    return absl::NotFoundError(
        absl::StrCat("executable ", formatDigest(request.executable()),
                     " is unknown (compile it first)"));
  RETURN_IF_ERROR(record.status());
  std::optional<v1::ExecutableManifest> boundHere;
  if ((*record)->manifest().symbols_size() > 0) {
    ASSIGN_OR_RETURN(boundHere, bindRequest(request, (*record)->manifest(), held));
    if (bound)
      *bound = *boundHere;
  }
  const v1::ExecutableManifest &manifest =
      boundHere ? *boundHere : (*record)->manifest();
  if (manifest.format() == "elf-relocatable-object")
    return absl::FailedPreconditionError(absl::StrCat(
        "executable ", formatDigest(request.executable()),
        " is a bare-metal object (", manifest.triple(),
        "); export it as a bundle instead of executing it"));

  // A named set was parsed and its digests checked once (ParameterSetCache);
  // a plain list is checked on every call.
  const Digests *parameters = &request.parameters();
  bool digestsChecked = false;
  std::vector<std::string> missing;
  if (request.has_parameter_set()) {
    if (request.parameters_size() != 0)
      return absl::InvalidArgumentError(
          "give parameters or parameter_set, not both");
    absl::StatusOr<std::shared_ptr<const v1::ParameterSet>> named =
        parameterSets.get(request.parameter_set());
    if (absl::IsNotFound(named.status()))
      return absl::FailedPreconditionError(absl::StrCat(
          "blobs not in the store (upload them with Blobs.Write): "
          "parameter_set ",
          formatDigest(request.parameter_set())));
    RETURN_IF_ERROR(named.status());
    // Parsed long ago, perhaps: the agent may still need to fetch it.
    if (!store.indexed(request.parameter_set()) &&
        !store.keep(request.parameter_set()))
      missing.push_back(absl::StrCat("parameter_set ",
                                     formatDigest(request.parameter_set())));
    parameters = &(*named)->parameters();
    digestsChecked = true;
  }
  if (parameters->size() != manifest.parameters_size())
    return absl::InvalidArgumentError(
        absl::StrCat("executable takes ", manifest.parameters_size(),
                     " parameters, got ", parameters->size()));
  for (int i = 0; i < manifest.parameters_size(); ++i) {
    const v1::Digest &digest = (*parameters)[i];
    const v1::ManifestArgument &expected = manifest.parameters(i);
    // Built only for a message: a model has hundreds of parameters.
    auto where = [&] {
      return absl::StrCat("parameter ", i, " ('", expected.name(), "')");
    };
    if (!digestsChecked)
      if (absl::Status status = validateDigest(digest); !status.ok())
        return absl::InvalidArgumentError(
            absl::StrCat(where(), ": ", status.message()));
    ASSIGN_OR_RETURN(int64_t size, byteSize(expected.type()));
    if (digest.size_bytes() != size)
      return absl::InvalidArgumentError(absl::StrCat(
          where(), ": ", formatType(expected.type()), " needs ", size,
          " bytes, blob has ", digest.size_bytes()));
    // Parameters stay resident in the agents: the index, not a stat each.
    if (!store.indexed(digest) && !store.keep(digest))
      missing.push_back(absl::StrCat(where(), " ", formatDigest(digest)));
  }
  if (request.inputs_size() != manifest.inputs_size())
    return absl::InvalidArgumentError(
        absl::StrCat("executable takes ", manifest.inputs_size(),
                     " inputs, got ", request.inputs_size()));
  auto file = inputFiles.begin();
  for (int i = 0; i < manifest.inputs_size(); ++i) {
    int fd = -1;
    if (file != inputFiles.end() && file->first == i)
      fd = (file++)->second.get();
    RETURN_IF_ERROR(checkTensor(request.inputs(i), manifest.inputs(i), "input",
                                i, fd, missing, store));
  }
  if (file != inputFiles.end())
    return absl::InvalidArgumentError(absl::StrCat(
        "a file was passed for input ", file->first, ", and the executable "
        "takes ", manifest.inputs_size(), " inputs (file inputs are named in "
        "ascending order)"));
  if (!missing.empty())
    return absl::FailedPreconditionError(
        absl::StrCat("blobs not in the store (upload them with Blobs.Write): ",
                     absl::StrJoin(missing, ", ")));
  return record;
}

grpc::Status ExecutorService::StreamedExecute(
    grpc::ServerContext *context,
    grpc::ServerUnaryStreamer<v1::ExecuteRequest, v1::ExecuteResponse> *stream) {
  RequestScope scope(*context, "kiln.v1.Executor/Execute", &metrics);
  if (grpc::Status denied = access.admit(*context, "kiln.v1.Executor/Execute"); !denied.ok())
    return denied;
  return serveParsedUnary(stream, [&](v1::ExecuteRequest &request,
                                      v1::ExecuteResponse &response) {
    return execute(context, &request, &response);
  });
}

grpc::Status ExecutorService::Release(grpc::ServerContext *context,
                                      const v1::ReleaseRequest *request,
                                      v1::ReleaseResponse *response) {
  RequestScope scope(*context, "kiln.v1.Executor/Release", &metrics);
  if (grpc::Status denied = access.admit(*context, "kiln.v1.Executor/Release");
      !denied.ok())
    return denied;
  uint32_t known = 0;
  for (const std::string &handle : request->handles())
    known += held.release(handle) ? 1 : 0;
  response->set_released(known);
  return grpc::Status::OK;
}

grpc::Status ExecutorService::OpenLocalSession(
    grpc::ServerContext *context, const v1::OpenLocalSessionRequest *,
    v1::LocalSession *response) {
  RequestScope scope(*context, "kiln.v1.Executor/OpenLocalSession", &metrics);
  if (grpc::Status denied =
          access.admit(*context, "kiln.v1.Executor/OpenLocalSession");
      !denied.ok())
    return denied;
  if (!localSessions)
    return toGrpcStatus(absl::UnavailableError(
                            "kilnd serves no local socket (--local-socket "
                            "none); Execute over gRPC"),
                        scope.id());
  absl::StatusOr<v1::LocalSession> session = localSessions->open();
  if (!session.ok())
    return toGrpcStatus(session.status(), scope.id());
  *response = *std::move(session);
  return grpc::Status::OK;
}

grpc::Status ExecutorService::execute(grpc::ServerContext *context,
                                      v1::ExecuteRequest *request,
                                      v1::ExecuteResponse *response) {
  auto start = Clock::now();
  // The client's deadline when it set one, else --execute-timeout.
  auto deadline = start + executeTimeout;
  if (context->deadline() != std::chrono::system_clock::time_point::max())
    deadline = start + (context->deadline() - std::chrono::system_clock::now());
  TensorFiles noFiles;
  return toGrpcStatus(run(*request, noFiles, start, deadline, *response, nullptr),
                      currentRequestId());
}

absl::Status ExecutorService::run(v1::ExecuteRequest &request,
                                  TensorFiles &inputFiles, Clock::time_point start,
                                  Clock::time_point deadline,
                                  v1::ExecuteResponse &response,
                                  TensorFiles *outputFiles,
                                  DirectChannelOffer *direct) {
  std::string executable = formatDigest(request.executable());
  // Released once this call is over, whatever its outcome (it may read
  // them): they go to their device with the next task that runs there.
  absl::Cleanup releaseAfterwards = [this, &request] {
    for (const std::string &handle : request.release())
      held.release(handle);
  };
  absl::StatusOr<DrainGate::Ticket> admitted = gate.enter();
  if (!admitted.ok())
    return admitted.status();
  // Everything this execution reads stays in the store until it is answered
  // (the agent fetches the artifact and blobs while it runs).
  BlobPins pins = store.pin({request.executable()});
  for (const v1::Digest &parameter : request.parameters())
    pins.add(parameter);
  if (request.has_parameter_set()) {
    pins.add(request.parameter_set());
    // Pinned before validate checks they are there (validate reports a set
    // that cannot be read).
    if (absl::StatusOr<std::shared_ptr<const v1::ParameterSet>> set =
            parameterSets.get(request.parameter_set());
        set.ok())
      for (const v1::Digest &parameter : (*set)->parameters())
        pins.add(parameter);
  }
  // The blob inputs, spent once the call has run (ContentStore::consumed).
  std::vector<v1::Digest> blobInputs;
  for (const v1::Tensor &input : request.inputs())
    if (input.payload_case() == v1::Tensor::kBlob) {
      pins.add(input.blob());
      blobInputs.push_back(input.blob());
    }
  std::optional<v1::ExecutableManifest> bound;
  absl::StatusOr<std::shared_ptr<const v1::ExecutableRecord>> record =
      validate(request, inputFiles, &bound);
  if (!record.ok()) {
    spdlog::warn("execute {} rejected: {}", executable,
                 std::string(record.status().message()));
    return record.status();
  }
  pins.add((*record)->artifact());
  // Pinned now; it may have been evicted just before.
  if (!store.contains((*record)->artifact())) {
    absl::Status gone = absl::NotFoundError(absl::StrCat(
        "the artifact of executable ", executable, " (",
        formatDigest((*record)->artifact()),
        ") was evicted from the store; compile the model again"));
    spdlog::warn("execute {} rejected: {}", executable,
                 std::string(gone.message()));
    return gone;
  }

  // This call's types: the record's, or with its symbols bound.
  const v1::ExecutableManifest &callManifest = bound ? *bound : (*record)->manifest();
  absl::StatusOr<std::string> pinnedDevice =
      placeHeldTensors(request, callManifest);
  if (!pinnedDevice.ok()) {
    spdlog::warn("execute {} rejected: {}", executable,
                 std::string(pinnedDevice.status().message()));
    return pinnedDevice.status();
  }
  // The record and signature every task of this executable carries, made
  // once: not copied into each call's task (kilobytes for a large graph).
  absl::StatusOr<std::shared_ptr<const TaskRecord>> taskRecord =
      taskRecords.get(request.executable(), *record);
  if (!taskRecord.ok())
    return taskRecord.status();
  v1::Task task;
  *task.mutable_executable() = request.executable();
  *task.mutable_keep_outputs() = request.keep_outputs();
  // A set travels as its digest: the agent reads it once and keeps it.
  task.mutable_parameters()->Swap(request.mutable_parameters());
  if (request.has_parameter_set())
    *task.mutable_parameter_set() = request.parameter_set();
  // Validated and pinned: the tensors move, not copy (megabytes per call).
  task.mutable_inputs()->Swap(request.mutable_inputs());
  task.set_request_id(currentRequestId());
  // A remote agent cannot take files: they become in-transit blobs, pinned
  // like the request's own.
  FileInputs fileInputs{std::move(inputFiles),
                        [this, &pins, &blobInputs](v1::Task &sent,
                                                   const TensorFiles &files) {
                          for (const auto &[index, file] : files) {
                            v1::Tensor &input = *sent.mutable_inputs(index);
                            ASSIGN_OR_RETURN(int64_t size, byteSize(input.type()));
                            ASSIGN_OR_RETURN(v1::Digest digest,
                                             store.putFile(file.get(), size,
                                                           Durability::kInTransit));
                            pins.add(digest);
                            blobInputs.push_back(digest);
                            *input.mutable_blob() = std::move(digest);
                          }
                          return absl::OkStatus();
                        }};
  // Back to the caller whatever happens (see run's comment in the header).
  absl::Cleanup returnFiles = [&fileInputs, &inputFiles] {
    inputFiles = std::move(fileInputs.files);
  };
  // A client on the local socket maps the output files itself.
  fileInputs.callerMapsOutputs = outputFiles != nullptr;
  // A channel serves calls that differ only in their inputs' bytes.
  if (direct && callManifest.symbols_size() == 0 &&
      (*record)->manifest().symbols_size() == 0 &&
      request.keep_outputs_size() == 0 && request.release_size() == 0 &&
      pinnedDevice->empty())
    fileInputs.directChannel = direct->agentEnd;
  const std::string &target = (*record)->manifest().target();
  Gauge &queueDepth = metrics.queueDepth.labels({target});
  queueDepth.inc();
  absl::StatusOr<ScheduledResult> scheduled =
      scheduler.run(target, std::move(task), **taskRecord, deadline, &fileInputs,
                    *pinnedDevice, &held);
  queueDepth.dec();
  if (scheduled.ok()) {
    metrics.queueWaitSeconds.labels({target}).observe(scheduled->queueUs /
                                                      1e6);
    // Its device has them; a client sending one again by digest finds it
    // unless room was needed since (else FAILED_PRECONDITION names it).
    for (const v1::Digest &input : blobInputs)
      store.consumed(input);
  }
  absl::Status status = scheduled.status();
  if (status.ok())
    status = statusFromRpcCode(scheduled->result.code(),
                               scheduled->result.message());
  if (status.ok())
    status = outputFiles ? checkOutputFiles(*scheduled)
                         : storeOutputFiles(*scheduled);
  // Outputs of data-dependent size: checked at the sizes the run computed.
  const Arguments *expectedOutputs = &callManifest.outputs();
  Arguments computedOutputs;
  if (status.ok() && dataDependentCount((*record)->manifest().symbols()) > 0) {
    computedOutputs = callManifest.outputs();
    status = withComputedSizes((*record)->manifest(), scheduled->result,
                               computedOutputs);
    expectedOutputs = &computedOutputs;
  }
  if (status.ok())
    status = checkOutputs(scheduled->result, *expectedOutputs,
                          scheduled->outputFiles,
                          keptOutputMask(request.keep_outputs(),
                                         callManifest.outputs_size())
                              .value_or(std::vector<bool>()));
  // The device holds what it kept even when the call fails here: recorded
  // and, on failure, released at once, so that nothing stays held for
  // nobody.
  if (scheduled.ok())
    for (const v1::Tensor &output : scheduled->result.outputs())
      if (output.payload_case() == v1::Tensor::kHeld) {
        held.add(output.held(), scheduled->deviceId, target, output.type());
        if (!status.ok())
          held.release(output.held());
      }
  std::string device = scheduled.ok() ? scheduled->deviceId : "none";
  metrics.executions.labels({device, status.ok() ? "ok" : "error"}).inc();
  metrics.executeSeconds.labels({device}).observe(
      std::chrono::duration<double>(Clock::now() - start).count());
  if (!status.ok()) {
    spdlog::error("execute {} on {} failed: {}", executable,
                  scheduled.ok() ? scheduled->deviceId : "no device",
                  std::string(status.message()));
    return status;
  }
  *response.mutable_outputs() = std::move(*scheduled->result.mutable_outputs());
  // Each blob output is owed one full read by this client before kilnd
  // lets it go from memory.
  for (const v1::Tensor &output : response.outputs())
    if (output.payload_case() == v1::Tensor::kBlob)
      store.handOut(output.blob());
  if (direct && fileInputs.directChannel >= 0 && scheduled->directChannelOpen) {
    direct->opened = true;
    metrics.directChannels.labels({scheduled->deviceId}).inc();
  }
  if (outputFiles)
    *outputFiles = std::move(scheduled->outputFiles);
  response.set_device_id(scheduled->deviceId);
  *response.mutable_counters() = scheduled->result.counters();
  if (uint64_t instructions = response.counters().instructions())
    metrics.deviceInstructions.labels({scheduled->deviceId})
        .inc(static_cast<double>(instructions));
  v1::Timings &timings = *response.mutable_timings();
  timings = scheduled->result.timings();
  timings.set_compile_us(0);
  timings.set_queue_us(scheduled->queueUs);
  timings.set_total_us(std::chrono::duration_cast<std::chrono::microseconds>(
                           Clock::now() - start)
                           .count());
  spdlog::info("execute {} device={} queue_us={} fetch_us={} load_us={} "
               "run_us={} total_us={}",
               executable, scheduled->deviceId, timings.queue_us(),
               timings.fetch_us(), timings.load_us(), timings.run_us(),
               timings.total_us());
  return absl::OkStatus();
}

absl::Status ExecutorService::storeOutputFiles(ScheduledResult &scheduled) {
  for (const auto &[index, file] : scheduled.outputFiles) {
    v1::Tensor &output = *scheduled.result.mutable_outputs(index);
    absl::StatusOr<int64_t> size = byteSize(output.type());
    absl::StatusOr<v1::Digest> digest =
        size.ok() ? store.putFile(file.get(), *size, Durability::kInTransit)
                  : absl::StatusOr<v1::Digest>(size.status());
    if (!digest.ok())
      return absl::InternalError(absl::StrCat(
          "storing output ", index, " of device ", scheduled.deviceId, ": ",
          digest.status().message()));
    *output.mutable_blob() = *std::move(digest);
  }
  scheduled.outputFiles.clear();
  return absl::OkStatus();
}

absl::Status ExecutorService::checkOutputFiles(const ScheduledResult &scheduled) {
  for (const auto &[index, file] : scheduled.outputFiles) {
    absl::StatusOr<int64_t> size =
        byteSize(scheduled.result.outputs(index).type());
    absl::Status sealed = size.ok() ? checkSealedTensorFile(file.get(), *size)
                                    : size.status();
    if (!sealed.ok())
      return absl::InternalError(absl::StrCat("output ", index, " of device ",
                                              scheduled.deviceId, ": ",
                                              sealed.message()));
  }
  return absl::OkStatus();
}

} // namespace kiln::server
