//===- ExecutorService.h - kiln.v1.Executor ---------------------*- C++ -*-===//
//
// This file declares ExecutorService: it checks an ExecuteRequest against the
// executable's manifest and runs it through the Scheduler.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/api/AccessPolicy.h"
#include "kiln/server/api/LocalSessions.h"
#include "kiln/server/store/ContentStore.h"
#include "kiln/server/store/ExecutableNamespace.h"
#include "kiln/server/store/ParameterSetCache.h"
#include "kiln/server/store/RecordCache.h"
#include "kiln/server/sched/TaskRecord.h"
#include "kiln/server/api/DrainGate.h"
#include "kiln/server/api/ServerMetrics.h"
#include "kiln/server/sched/Scheduler.h"
#include "kiln/v1/executable.pb.h"
#include "kiln/v1/executor.grpc.pb.h"

#include <chrono>
#include <optional>

namespace kiln::server {

/// Serves kiln.v1.Executor.Execute.
/// kiln.v1.Executor. Execute runs through run(), which the local socket
/// (LocalExecuteServer) shares.
/// A local call's offer of a direct channel to its device's agent
/// (kiln.v1.LocalExecute.open_direct): the agent's end of a socket pair,
/// owned by the caller, and whether the agent took it.
struct DirectChannelOffer {
  int agentEnd = -1;
  bool opened = false;
};

class ExecutorService final
    : public v1::Executor::WithStreamedUnaryMethod_Execute<v1::Executor::Service> {
public:
  /// `executeTimeout` bounds a call whose client set no deadline.
  /// Requests enter through `gate` (UNAVAILABLE once kilnd drains); each is
  /// counted and timed in `metrics`.
  ExecutorService(ContentStore &store, const ExecutableNamespace &executables,
                  TaskRecords &taskRecords, Scheduler &scheduler,
                  std::chrono::milliseconds executeTimeout, DrainGate &gate,
                  ServerMetrics &metrics, const AccessPolicy &access);

  /// Parses the request itself (streamed unary): unparsable bytes get
  /// INVALID_ARGUMENT with a message.
  grpc::Status StreamedExecute(
      grpc::ServerContext *context,
      grpc::ServerUnaryStreamer<v1::ExecuteRequest, v1::ExecuteResponse> *stream)
      override;

  using Clock = std::chrono::steady_clock;

  /// Execute for a parsed request; its inputs move into the task.
  grpc::Status execute(grpc::ServerContext *context,
                       v1::ExecuteRequest *request,
                       v1::ExecuteResponse *response);

  /// One Execute, however it arrived (gRPC or the local socket).
  /// `inputFiles` hold the bytes of the request's payload-less inputs
  /// (sealed memfds; checked here). With `outputFiles`, outputs the device
  /// passed in files stay files (a local caller maps them); without, they
  /// become in-transit blobs. Request tensors move into the task.
  /// `inputFiles` stay the caller's: a local caller closes them after its
  /// reply is out, since dropping the last reference to a client's memfd
  /// frees its pages (~70 us for 600 KB), which should not delay the answer.
  /// With `direct` (a local call that asked for a direct channel), its
  /// agent end goes with the task when the call can be repeated on one (a
  /// static manifest, no held tensors kept, released or read) and the
  /// device's agent is one kilnd started; `direct->opened` then says
  /// whether the agent serves it.
  absl::Status run(v1::ExecuteRequest &request, TensorFiles &inputFiles,
                   Clock::time_point start, Clock::time_point deadline,
                   v1::ExecuteResponse &response, TensorFiles *outputFiles,
                   DirectChannelOffer *direct = nullptr);

  /// Forgets held tensors; their devices drop them with their next tasks.
  grpc::Status Release(grpc::ServerContext *context,
                       const v1::ReleaseRequest *request,
                       v1::ReleaseResponse *response) override;

  /// Answers OpenLocalSession from `sessions` (UNAVAILABLE while null: no
  /// local socket).
  void setLocalSessions(LocalSessions *sessions) { localSessions = sessions; }
  grpc::Status OpenLocalSession(grpc::ServerContext *context,
                                const v1::OpenLocalSessionRequest *request,
                                v1::LocalSession *response) override;

  /// Loads the executable's record and checks parameters and inputs against
  /// its manifest (counts, types, sizes, blob presence). An executable kilnd
  /// did not make (not in its ExecutableNamespace) is NOT_FOUND, whatever
  /// blob the store holds under that digest. Records come from a
  /// RecordCache: read from the store once per executable.
  /// A request naming a parameter_set is checked against the set's
  /// parameters (read once, see ParameterSetCache) and the set's own blob
  /// must be in the store.
  /// An executable with symbolic sizes is checked against the manifest its
  /// inputs bind (kiln/common/SymbolicSizes.h), stored in `bound` when
  /// given: INVALID_ARGUMENT names the input, dimension and symbol that do
  /// not fit.
  absl::StatusOr<std::shared_ptr<const v1::ExecutableRecord>>
  validate(const v1::ExecuteRequest &request,
           const TensorFiles &inputFiles = {},
           std::optional<v1::ExecutableManifest> *bound = nullptr) const;

  /// The device that holds the request's held inputs ("" when it names
  /// none), after checking each against the manifest's input type and the
  /// keep_outputs indices: FAILED_PRECONDITION for a handle kilnd does not
  /// know, INVALID_ARGUMENT for a type mismatch, inputs held by different
  /// devices, or a bad or repeated output index.
  absl::StatusOr<std::string>
  placeHeldTensors(const v1::ExecuteRequest &request,
                   const v1::ExecutableManifest &manifest) const;

private:
  /// Stores the outputs the device passed in files as in-transit blobs.
  absl::Status storeOutputFiles(ScheduledResult &scheduled);
  /// Checks the outputs the device passed in files before they go on.
  static absl::Status checkOutputFiles(const ScheduledResult &scheduled);

  ContentStore &store;
  const ExecutableNamespace &executables;
  TaskRecords &taskRecords;
  Scheduler &scheduler;
  std::chrono::milliseconds executeTimeout;
  DrainGate &gate;
  ServerMetrics &metrics;
  const AccessPolicy &access;
  mutable RecordCache records{store};
  mutable ParameterSetCache parameterSets{store};
  /// Tensors devices hold for callers (ExecuteRequest.keep_outputs).
  HeldTensorIndex held;
  LocalSessions *localSessions = nullptr;
};

} // namespace kiln::server
