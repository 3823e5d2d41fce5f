//===- TaskSigner.h - kilnd's signature on every task ---------------------===//
//
// This file declares TaskSigner, which signs tasks with kilnd's task key and
// remembers the signature per executable (one Ed25519 signature serves every
// call of it).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/TaskSignature.h"

#include "absl/container/flat_hash_map.h"

#include <mutex>
#include <string>

namespace kiln::server {

class TaskSigner {
public:
  explicit TaskSigner(TaskSigningKey key) : key(std::move(key)) {}

  /// Sets `task.signature` (computed once per signed message; a failure
  /// is INTERNAL and not remembered).
  absl::Status sign(v1::Task &task);

  /// The key agents verify with (PEM public key).
  std::string publicKeyPem() const { return key.publicKeyPem(); }

private:
  static constexpr size_t kRemembered = 4096;
  TaskSigningKey key;
  std::mutex mutex;
  absl::flat_hash_map<std::string, std::string> signatures; // message -> sig
};

} // namespace kiln::server
