//===- TaskRecordTest.cpp - the shared part of an executable's tasks ------===//
//
// Tests TaskRecord and TaskRecords: one signed record per executable, which
// agents verify once it completes a task, and whose serialized fragment
// completes a serialized task.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/Digest.h"
#include "kiln/common/TaskSignature.h"
#include "kiln/server/sched/TaskRecord.h"

#include <gtest/gtest.h>

namespace kiln::server {
namespace {

std::shared_ptr<const v1::ExecutableRecord> recordOf(const std::string &entry) {
  auto record = std::make_shared<v1::ExecutableRecord>();
  record->mutable_manifest()->set_entry_symbol(entry);
  record->mutable_manifest()->set_format("elf-shared-object");
  record->mutable_manifest()->set_features("+avx2,+fma");
  *record->mutable_artifact() = digestOf("code of " + entry);
  return record;
}

TEST(TaskRecordTest, OneSignedRecordPerExecutableThatAgentsVerify) {
  absl::StatusOr<TaskSigningKey> key = TaskSigningKey::generate();
  ASSERT_TRUE(key.ok()) << key.status();
  absl::StatusOr<TaskVerifier> verifier =
      TaskVerifier::fromPem(key->publicKeyPem());
  ASSERT_TRUE(verifier.ok()) << verifier.status();
  TaskRecords records(*std::move(key));

  v1::Digest first = digestOf("executable one");
  v1::Digest second = digestOf("executable two");
  auto a = records.get(first, recordOf("one"));
  auto again = records.get(first, recordOf("one"));
  auto b = records.get(second, recordOf("two"));
  ASSERT_TRUE(a.ok() && again.ok() && b.ok());
  EXPECT_EQ(a->get(), again->get()) << "kept, not signed again";
  EXPECT_NE(a->get(), b->get());
  EXPECT_EQ((*a)->requiredFeatures(),
            (std::vector<std::string>{"avx2", "fma"}));

  // A task completed by its record verifies; under another executable's
  // digest, or with another's record, it does not.
  v1::Task task;
  *task.mutable_executable() = first;
  (*a)->fill(task);
  EXPECT_TRUE(verifier->verify(task).ok());
  *task.mutable_executable() = second;
  EXPECT_TRUE(absl::IsPermissionDenied(verifier->verify(task)));
  *task.mutable_executable() = first;
  (*b)->fill(task);
  EXPECT_TRUE(absl::IsPermissionDenied(verifier->verify(task)));
}

TEST(TaskRecordTest, TheFragmentAndTheRecordBytesCompleteATask) {
  TaskRecord record(recordOf("main"), "signature bytes");
  v1::Task task;
  task.set_task_id("t1");
  task.add_inputs()->set_data("inline bytes");
  task.add_release("held-1");

  v1::Task parsed;
  ASSERT_TRUE(parsed.ParseFromString(task.SerializeAsString() +
                                     record.signatureFragment()));
  EXPECT_FALSE(parsed.has_record());
  ASSERT_TRUE(parsed.mutable_record()->ParseFromString(record.recordBytes()));
  v1::Task expected = task;
  record.fill(expected);
  EXPECT_EQ(parsed.SerializeAsString(), expected.SerializeAsString());
  EXPECT_EQ(parsed.record().manifest().entry_symbol(), "main");
  EXPECT_EQ(parsed.signature(), "signature bytes");
  EXPECT_EQ(parsed.inputs(0).data(), "inline bytes");
}

} // namespace
} // namespace kiln::server
