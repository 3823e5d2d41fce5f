//===- ExecutableRecordFuzzer.cpp - fuzz ExecutableRecord parsing ---------===//
//
// libFuzzer target: bytes as a kiln.v1.ExecutableRecord (kilnd's record of an
// executable, which agents receive in every task), through the checks made
// on its manifest: argument types and byte sizes, the artifact digest, the
// task validation an agent runs, and the CPU feature list the cpu agent
// compares with its host.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/TaskRunner.h"
#include "kiln/common/CpuModel.h"
#include "kiln/common/Digest.h"
#include "kiln/common/TensorTypes.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::v1::ExecutableRecord record;
  if (!record.ParseFromArray(data, static_cast<int>(size)))
    return 0;
  const kiln::v1::ExecutableManifest &manifest = record.manifest();
  (void)kiln::validateDigest(record.artifact());
  kiln::v1::Task task;
  task.set_task_id("fuzz");
  *task.mutable_record() = record;
  for (const auto *arguments :
       {&manifest.parameters(), &manifest.inputs(), &manifest.outputs()})
    for (const kiln::v1::ManifestArgument &argument : *arguments) {
      (void)kiln::byteSize(argument.type());
      (void)kiln::formatType(argument.type());
    }
  // A task as kilnd would send it for this record: one blob per argument.
  for (const kiln::v1::ManifestArgument &argument : manifest.parameters()) {
    absl::StatusOr<int64_t> bytes = kiln::byteSize(argument.type());
    kiln::v1::Digest *digest = task.add_parameters();
    digest->set_hash(std::string(64, 'a'));
    digest->set_size_bytes(bytes.ok() ? *bytes : 0);
  }
  (void)kiln::agent::validateTask(task, "cpu");
  std::vector<std::string> required = kiln::parseFeatureList(manifest.features());
  (void)kiln::missingFeatures(required, {"+avx2", "+fma"});
  return 0;
}
