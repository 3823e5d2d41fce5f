//===- TaskSigner.cpp - kilnd's signature on every task -------------------===//
//
// This file implements TaskSigner: a bounded map from signed message to
// signature in front of the Ed25519 key.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/sched/TaskSigner.h"

#include "kiln/common/Status.h"

namespace kiln::server {

absl::Status TaskSigner::sign(v1::Task &task) {
  std::string message = taskSigningMessage(task);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = signatures.find(message); it != signatures.end()) {
      task.set_signature(it->second);
      return absl::OkStatus();
    }
  }
  ASSIGN_OR_RETURN(std::string signature, key.sign(message));
  task.set_signature(signature);
  std::lock_guard<std::mutex> lock(mutex);
  if (signatures.size() >= kRemembered)
    signatures.clear();
  signatures.emplace(std::move(message), std::move(signature));
  return absl::OkStatus();
}

} // namespace kiln::server
