//===- TaskRecord.cpp - what every task of one executable carries ---------===//
//
// This file implements TaskRecord and TaskRecords.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/sched/TaskRecord.h"

#include "kiln/common/CpuModel.h"
#include "kiln/common/Status.h"

namespace kiln::server {

TaskRecord::TaskRecord(std::shared_ptr<const v1::ExecutableRecord> record,
                       std::string signature)
    : shared(std::move(record)), signed_(std::move(signature)),
      features(parseFeatureList(shared->manifest().features())) {
  v1::Task part;
  part.set_signature(signed_);
  signatureBytes = part.SerializeAsString();
  serializedRecord = shared->SerializeAsString();
}

void TaskRecord::fill(v1::Task &task) const {
  *task.mutable_record() = *shared;
  task.set_signature(signed_);
}

absl::StatusOr<std::shared_ptr<const TaskRecord>>
TaskRecords::get(const v1::Digest &executable,
                 std::shared_ptr<const v1::ExecutableRecord> record) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = kept.find(executable.hash()); it != kept.end())
      return it->second;
  }
  ASSIGN_OR_RETURN(std::string signature,
                   key.sign(taskSigningMessage(executable, *record)));
  auto made = std::make_shared<const TaskRecord>(std::move(record),
                                                 std::move(signature));
  std::lock_guard<std::mutex> lock(mutex);
  if (kept.size() >= kKept)
    kept.clear();
  kept.emplace(executable.hash(), made);
  return made;
}

} // namespace kiln::server
