//===- TaskRunnerTest.cpp - tasks to results, without the network ---------===//
//
// This file tests TaskRunner with the cpu backend and an in-memory blob
// service: numbers, caching of executables and parameters, the inline/blob
// output split, and every failure turning into a result.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/agent/RecordCache.h"
#include "kiln/agent/TaskRunner.h"
#include "kiln/agent/cpu/CpuBackend.h"
#include "kiln/common/Digest.h"

#include "absl/strings/str_cat.h"

#include <gtest/gtest.h>

#include <functional>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::agent {
namespace {

using test::TempDir;

class TaskRunnerTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto opened = BlobCache::open(dir.path() / "cache");
    ASSERT_TRUE(opened.ok()) << opened.status();
    cache = std::move(*opened);
    runner = std::make_unique<TaskRunner>(backend, *cache, resident, blobs);
    runner->setTaskVerifier(test::taskVerifier());
  }

  /// A task computing a + 2x over n floats, with every blob in `blobs`.
  v1::Task axpyTask(int n, const std::string &id) {
    auto path = test::compileSharedObject(dir.path(), absl::StrCat("axpy", n),
                                          test::axpyKernelSource(n));
    EXPECT_TRUE(path.ok()) << path.status();
    std::string artifactBytes = test::readFileBytes(*path);
    blobs.add(artifactBytes);
    v1::Task task;
    task.set_task_id(id);
    task.set_request_id("req-" + id);
    *task.mutable_record() = test::axpyRecord(n, artifactBytes);
    *task.mutable_executable() = digestOf(task.record().SerializeAsString());
    std::vector<float> a(n), x(n);
    for (int i = 0; i < n; ++i) {
      a[i] = static_cast<float>(i % 97);
      x[i] = static_cast<float>(i % 13) - 6.0f;
    }
    *task.add_parameters() = blobs.add(test::floatBytes(a));
    v1::Tensor *input = task.add_inputs();
    *input->mutable_type() = task.record().manifest().inputs(0).type();
    input->set_data(test::floatBytes(x));
    return test::signTask(task);
  }

  static void expectAxpy(const v1::Task &task, const std::string &outBytes) {
    std::vector<float> out = test::bytesToFloats(outBytes);
    int n = static_cast<int>(out.size());
    ASSERT_EQ(n, task.record().manifest().outputs(0).type().shape(0));
    for (int i = 0; i < n; ++i)
      ASSERT_FLOAT_EQ(out[i], static_cast<float>(i % 97) +
                                  2.0f * (static_cast<float>(i % 13) - 6.0f))
          << "at " << i;
  }

  TempDir dir;
  CpuBackend backend;
  test::MemoryBlobService blobs;
  ResidentSet resident{1 << 30};
  std::unique_ptr<BlobCache> cache;
  std::unique_ptr<TaskRunner> runner;
};

TEST_F(TaskRunnerTest, RunsATaskAndReturnsSmallOutputsInline) {
  v1::Task task = axpyTask(256, "t1");
  v1::TaskResult result = runner->run(task);
  ASSERT_EQ(result.code(), 0) << result.message();
  EXPECT_EQ(result.task_id(), "t1");
  ASSERT_EQ(result.outputs_size(), 1);
  ASSERT_EQ(result.outputs(0).payload_case(), v1::Tensor::kData);
  expectAxpy(task, result.outputs(0).data());
  EXPECT_GT(result.timings().load_us(), 0);
  EXPECT_EQ(blobs.reads.load(), 2) << "artifact and one parameter";
}

TEST_F(TaskRunnerTest, ARecordBesideTheTaskServesLikeOneInside) {
  // The local link sends the record as bytes beside the task; the agent
  // parses each distinct record once (RecordCache).
  const v1::Task full = axpyTask(64, "t1");
  std::string bytes = full.record().SerializeAsString();
  v1::Task task = full;
  task.clear_record();
  RecordCache records;
  for (const char *id : {"t1", "t2"}) {
    task.set_task_id(id);
    absl::StatusOr<std::shared_ptr<const v1::ExecutableRecord>> record =
        records.get(bytes);
    ASSERT_TRUE(record.ok()) << record.status();
    v1::TaskResult result = runner->run(task, **record, nullptr);
    ASSERT_EQ(result.code(), 0) << result.message();
    expectAxpy(full, result.outputs(0).data());
  }
  EXPECT_EQ(records.parses(), 1u) << "the second call reused the parsed record";
  // A signature over another record does not verify with this one.
  v1::ExecutableRecord other;
  ASSERT_TRUE(other.ParseFromString(bytes));
  other.mutable_manifest()->set_entry_symbol("kiln_other");
  auto reparsed = records.get(other.SerializeAsString());
  ASSERT_TRUE(reparsed.ok());
  EXPECT_EQ(records.parses(), 2u) << "a record differing in any byte is parsed anew";
  task.set_task_id("t3");
  EXPECT_EQ(runner->run(task, **reparsed, nullptr).code(),
            static_cast<int>(absl::StatusCode::kPermissionDenied));
  // Bytes that are no record: INVALID_ARGUMENT, and nothing kept.
  EXPECT_TRUE(absl::IsInvalidArgument(records.get("\xff\xff\xff").status()));
  // Without a record at all the task is refused, naming it.
  v1::TaskResult bare = runner->run(task);
  EXPECT_EQ(bare.code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(bare.message(), "task carries no executable record");
}

TEST_F(TaskRunnerTest, ASecondTaskReusesTheLoadedExecutableAndParameters) {
  v1::Task task = axpyTask(64, "t1");
  ASSERT_EQ(runner->run(task).code(), 0);
  int readsAfterFirst = blobs.reads.load();
  task.set_task_id("t2");
  v1::TaskResult second = runner->run(task);
  ASSERT_EQ(second.code(), 0) << second.message();
  expectAxpy(task, second.outputs(0).data());
  EXPECT_EQ(second.timings().load_us(), 0) << "already loaded";
  EXPECT_EQ(blobs.reads.load(), readsAfterFirst) << "nothing refetched";
  EXPECT_EQ(runner->loadedExecutables(), 1u);
  EXPECT_EQ(resident.size(), 1u);
}

TEST_F(TaskRunnerTest, AParameterSetIsFetchedOnceAndNamesTheParameters) {
  v1::Task listed = axpyTask(128, "t1");
  v1::Task task = listed;
  v1::ParameterSet set;
  *set.mutable_parameters() = listed.parameters();
  task.clear_parameters();
  *task.mutable_parameter_set() = blobs.add(set.SerializeAsString());
  v1::TaskResult first = runner->run(task);
  ASSERT_EQ(first.code(), 0) << first.message();
  expectAxpy(task, first.outputs(0).data());
  EXPECT_EQ(blobs.reads.load(), 3) << "artifact, the set and its parameter";
  task.set_task_id("t2");
  v1::TaskResult second = runner->run(task);
  ASSERT_EQ(second.code(), 0) << second.message();
  expectAxpy(task, second.outputs(0).data());
  EXPECT_EQ(blobs.reads.load(), 3) << "the set is kept, not fetched again";
}

TEST_F(TaskRunnerTest, ABadParameterSetIsAnErrorNamingIt) {
  v1::Task task = axpyTask(64, "t1");
  v1::Digest parameter = task.parameters(0);
  task.clear_parameters();
  // Two parameters where the manifest has one.
  v1::ParameterSet twice;
  *twice.add_parameters() = parameter;
  *twice.add_parameters() = parameter;
  *task.mutable_parameter_set() = blobs.add(twice.SerializeAsString());
  v1::TaskResult result = runner->run(task);
  EXPECT_EQ(result.code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(result.message().find("parameter_set: task has 2 parameters"),
            std::string::npos)
      << result.message();
  // Not a ParameterSet.
  *task.mutable_parameter_set() = blobs.add(std::string("\x0d\x01", 2));
  result = runner->run(task);
  EXPECT_EQ(result.code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(result.message().find("not a serialized kiln.v1.ParameterSet"),
            std::string::npos)
      << result.message();
  // Both a list and a set.
  *task.add_parameters() = parameter;
  result = runner->run(task);
  EXPECT_EQ(result.code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(result.message().find("parameters and a parameter_set"),
            std::string::npos)
      << result.message();
}

TEST_F(TaskRunnerTest, LeastRecentlyUsedExecutablesAreUnloadedPastTheCap) {
  TaskRunner capped(backend, *cache, resident, blobs, /*maxLoaded=*/2);
  capped.setTaskVerifier(test::taskVerifier());
  v1::Task a = axpyTask(16, "a"), b = axpyTask(32, "b"), c = axpyTask(48, "c");
  ASSERT_EQ(capped.run(a).code(), 0);
  ASSERT_EQ(capped.run(b).code(), 0);
  ASSERT_EQ(capped.run(a).timings().load_us(), 0) << "a is loaded and now newest";
  v1::TaskResult third = capped.run(c); // unloads b, the least recently used
  ASSERT_EQ(third.code(), 0) << third.message();
  EXPECT_EQ(capped.loadedExecutables(), 2u);
  EXPECT_EQ(capped.run(a).timings().load_us(), 0) << "a stayed loaded";
  v1::TaskResult again = capped.run(b);
  ASSERT_EQ(again.code(), 0) << again.message();
  EXPECT_GT(again.timings().load_us(), 0) << "b was unloaded and loads again";
  expectAxpy(b, again.outputs(0).data());
  EXPECT_EQ(capped.loadedExecutables(), 2u);
}

TEST_F(TaskRunnerTest, AnEvictedParameterIsReloadedFromTheDiskCache) {
  ResidentSet tiny(16); // Too small to keep anything.
  TaskRunner tinyRunner(backend, *cache, tiny, blobs);
  tinyRunner.setTaskVerifier(test::taskVerifier());
  v1::Task task = axpyTask(64, "t1");
  ASSERT_EQ(tinyRunner.run(task).code(), 0);
  int readsAfterFirst = blobs.reads.load();
  v1::TaskResult second = tinyRunner.run(task);
  ASSERT_EQ(second.code(), 0) << second.message();
  expectAxpy(task, second.outputs(0).data());
  EXPECT_EQ(blobs.reads.load(), readsAfterFirst) << "served from disk";
}

TEST_F(TaskRunnerTest, LargeOutputsAreUploadedAsBlobs) {
  constexpr int kN = (3 << 20) / 4 + 16; // Just over 3 MiB of f32.
  v1::Task task = axpyTask(kN, "big");
  v1::TaskResult result = runner->run(task);
  ASSERT_EQ(result.code(), 0) << result.message();
  ASSERT_EQ(result.outputs(0).payload_case(), v1::Tensor::kBlob);
  const v1::Digest &digest = result.outputs(0).blob();
  EXPECT_EQ(digest.size_bytes(), int64_t{kN} * 4);
  ASSERT_TRUE(blobs.has(digest.hash()));
  expectAxpy(task, blobs.get(digest.hash()));
}

TEST_F(TaskRunnerTest, AKeptOutputIsHeldAndFeedsTheNextTaskUntilReleased) {
  constexpr int kN = 64;
  v1::Task task = axpyTask(kN, "keep");
  task.add_keep_outputs(0);
  v1::TaskResult kept = runner->run(task);
  ASSERT_EQ(kept.code(), 0) << kept.message();
  ASSERT_EQ(kept.outputs(0).payload_case(), v1::Tensor::kHeld);
  const std::string handle = kept.outputs(0).held();
  EXPECT_EQ(handle.size(), 5u + 32u) << handle;
  EXPECT_EQ(runner->heldTensors().heldBytes(), kN * 4);

  // a + 2(a + 2x), reading the held tensor in place of bytes.
  v1::Task next = axpyTask(kN, "use");
  next.mutable_inputs(0)->set_held(handle);
  next.add_release(handle);
  v1::TaskResult used = runner->run(next);
  ASSERT_EQ(used.code(), 0) << used.message();
  std::vector<float> out = test::bytesToFloats(used.outputs(0).data());
  for (int i = 0; i < kN; ++i) {
    float a = static_cast<float>(i % 97), x = static_cast<float>(i % 13) - 6.0f;
    ASSERT_FLOAT_EQ(out[i], a + 2.0f * (a + 2.0f * x)) << "at " << i;
  }
  EXPECT_EQ(runner->heldTensors().size(), 0u) << "released after the task";

  next.set_task_id("again");
  v1::TaskResult gone = runner->run(next);
  EXPECT_EQ(gone.code(), static_cast<int>(absl::StatusCode::kFailedPrecondition));
  EXPECT_NE(gone.message().find("input 0"), std::string::npos) << gone.message();
  EXPECT_NE(gone.message().find("not on this device"), std::string::npos)
      << gone.message();
}

TEST_F(TaskRunnerTest, AHeldTensorOfAnotherTypeIsRefused) {
  v1::Task small = axpyTask(8, "small");
  small.add_keep_outputs(0);
  v1::TaskResult kept = runner->run(small);
  ASSERT_EQ(kept.code(), 0) << kept.message();
  v1::Task task = axpyTask(16, "wrong");
  task.mutable_inputs(0)->set_held(kept.outputs(0).held());
  v1::TaskResult result = runner->run(task);
  EXPECT_EQ(result.code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(result.message().find("the held tensor is f32[8]"), std::string::npos)
      << result.message();
}

TEST_F(TaskRunnerTest, KeepingPastTheBudgetHoldsNothing) {
  TaskRunner tight(backend, *cache, resident, blobs,
                   TaskRunner::kDefaultMaxLoaded, /*heldBytes=*/100);
  tight.setTaskVerifier(test::taskVerifier());
  v1::Task task = axpyTask(64, "over"); // 256 bytes to keep
  task.add_keep_outputs(0);
  v1::TaskResult result = tight.run(task);
  EXPECT_EQ(result.code(), static_cast<int>(absl::StatusCode::kResourceExhausted));
  EXPECT_NE(result.message().find("--held-tensor-bytes"), std::string::npos)
      << result.message();
  EXPECT_EQ(result.outputs_size(), 0);
  EXPECT_EQ(tight.heldTensors().size(), 0u);
}

TEST_F(TaskRunnerTest, ReleasesTheTaskDoesNotReadFreeTheBudgetFirst) {
  TaskRunner tight(backend, *cache, resident, blobs,
                   TaskRunner::kDefaultMaxLoaded, /*heldBytes=*/300);
  tight.setTaskVerifier(test::taskVerifier());
  v1::Task first = axpyTask(64, "first"); // 256 bytes kept
  first.add_keep_outputs(0);
  v1::TaskResult kept = tight.run(first);
  ASSERT_EQ(kept.code(), 0) << kept.message();
  v1::Task second = axpyTask(64, "second");
  second.add_keep_outputs(0);
  second.add_release(kept.outputs(0).held());
  v1::TaskResult next = tight.run(second);
  ASSERT_EQ(next.code(), 0) << next.message();
  EXPECT_EQ(tight.heldTensors().size(), 1u);
  EXPECT_EQ(tight.heldTensors().heldBytes(), 256);
}

TEST_F(TaskRunnerTest, KeepOutputsMustNameOutputsOnce) {
  v1::Task task = axpyTask(8, "bad");
  task.add_keep_outputs(1);
  v1::TaskResult result = runner->run(task);
  EXPECT_EQ(result.code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(result.message().find("names output 1"), std::string::npos)
      << result.message();
  task.clear_keep_outputs();
  task.add_keep_outputs(0);
  task.add_keep_outputs(0);
  result = runner->run(task);
  EXPECT_NE(result.message().find("twice"), std::string::npos) << result.message();
}

TEST_F(TaskRunnerTest, BlobInputsAreFetchedAndVerified) {
  v1::Task task = axpyTask(128, "t1");
  v1::Tensor *input = task.mutable_inputs(0);
  v1::Digest digest = blobs.add(input->data());
  *input->mutable_blob() = digest;
  v1::TaskResult result = runner->run(task);
  ASSERT_EQ(result.code(), 0) << result.message();
  expectAxpy(task, result.outputs(0).data());
}

/// A file holding `bytes` (what kilnd passes: its store's blob file).
UniqueFd fileWith(const std::filesystem::path &path, const std::string &bytes) {
  test::writeFileBytes(path, bytes);
  return UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
}

TEST_F(TaskRunnerTest, LocalLinkFilesAreMappedNotFetched) {
  constexpr int kN = (3 << 20) / 4 + 16; // outputs past the inline limit
  v1::Task task = axpyTask(kN, "local");
  v1::Tensor *input = task.mutable_inputs(0);
  std::string inputBytes = input->data();
  // The blob is not in the blob service: only the file has the bytes.
  *input->mutable_blob() = digestOf(inputBytes);
  int readsBefore = blobs.reads.load();
  LocalFiles files;
  files.inputs.emplace_back(0, fileWith(dir.path() / "input.bin", inputBytes));
  files.outputsAsFiles = true;
  v1::TaskResult result = runner->run(test::signTask(task), &files);
  ASSERT_EQ(result.code(), 0) << result.message();
  // The artifact and parameter are fetched; the input is not.
  EXPECT_EQ(blobs.reads.load() - readsBefore, 2);
  ASSERT_EQ(files.outputs.size(), 1u);
  EXPECT_EQ(files.outputs[0].first, 0);
  EXPECT_EQ(result.outputs(0).payload_case(), v1::Tensor::PAYLOAD_NOT_SET)
      << "the output's bytes are in its memfd, not uploaded";
  int memfd = files.outputs[0].second.get();
  std::string out(size_t{kN} * 4, '\0');
  ASSERT_EQ(::pread(memfd, out.data(), out.size(), 0),
            static_cast<ssize_t>(out.size()));
  expectAxpy(task, out);
  // The input's mapping is the caller's to drop, after it has replied.
  ASSERT_EQ(files.inputBuffers.size(), 1u);
  ASSERT_EQ(files.inputBuffers[0].size(), inputBytes.size());
  EXPECT_EQ(std::memcmp(files.inputBuffers[0].data(), inputBytes.data(),
                        inputBytes.size()),
            0);
}

TEST_F(TaskRunnerTest, ALaterCallWritesItsOutputFileIntoASpareMadeAhead) {
  constexpr int kN = (3 << 20) / 4 + 16; // outputs past the inline limit
  v1::Task task = axpyTask(kN, "spares");
  std::vector<ino_t> outputFiles;
  for (int call = 0; call < 3; ++call) {
    LocalFiles files;
    files.outputsAsFiles = true;
    v1::TaskResult result = runner->run(task, &files);
    ASSERT_EQ(result.code(), 0) << result.message();
    ASSERT_EQ(files.outputs.size(), 1u);
    int memfd = files.outputs[0].second.get();
    struct stat info {};
    ASSERT_EQ(::fstat(memfd, &info), 0);
    EXPECT_EQ(info.st_size, int64_t{kN} * 4);
    outputFiles.push_back(info.st_ino);
    std::string out(size_t{kN} * 4, '\0');
    ASSERT_EQ(::pread(memfd, out.data(), out.size(), 0),
              static_cast<ssize_t>(out.size()));
    expectAxpy(task, out);
    // The next call's spare is made in the background; wait for it here
    // so that the count below does not depend on timing.
    runner->outputFileSpares().waitIdle();
  }
  // The first call's file was fresh; the next two were spares.
  EXPECT_EQ(runner->outputFileSpares().hits(), 2u);
  EXPECT_NE(outputFiles[0], outputFiles[1]);
  EXPECT_NE(outputFiles[1], outputFiles[2]) << "a spare is handed out once";
  EXPECT_EQ(runner->outputFileSpares().readyCount(), 1u);
}

TEST_F(TaskRunnerTest, WithoutASpareBudgetEveryOutputFileIsFresh) {
  TaskRunner bare(backend, *cache, resident, blobs, TaskRunner::kDefaultMaxLoaded,
                  TaskRunner::kDefaultHeldBytes, /*outputSpareBytes=*/0);
  bare.setTaskVerifier(test::taskVerifier());
  constexpr int kN = (3 << 20) / 4 + 16;
  v1::Task task = axpyTask(kN, "nospares");
  for (int call = 0; call < 2; ++call) {
    LocalFiles files;
    files.outputsAsFiles = true;
    v1::TaskResult result = bare.run(task, &files);
    ASSERT_EQ(result.code(), 0) << result.message();
    ASSERT_EQ(files.outputs.size(), 1u);
  }
  EXPECT_EQ(bare.outputFileSpares().hits(), 0u);
  EXPECT_EQ(bare.outputFileSpares().readyCount(), 0u);
}

TEST_F(TaskRunnerTest, AnInlineInputsCopyIsTheLocalCallersToDropToo) {
  v1::Task task = axpyTask(64, "inline");
  LocalFiles files;
  v1::TaskResult result = runner->run(test::signTask(task), &files);
  ASSERT_EQ(result.code(), 0) << result.message();
  ASSERT_EQ(files.inputBuffers.size(), 1u);
  EXPECT_EQ(files.inputBuffers[0].view(), task.inputs(0).data());
}

TEST_F(TaskRunnerTest, ALocalLinkFileOfTheWrongSizeIsRefused) {
  v1::Task task = axpyTask(64, "short");
  v1::Tensor *input = task.mutable_inputs(0);
  std::string inputBytes = input->data();
  *input->mutable_blob() = digestOf(inputBytes);
  LocalFiles files;
  files.inputs.emplace_back(
      0, fileWith(dir.path() / "short.bin", inputBytes.substr(0, 100)));
  v1::TaskResult result = runner->run(test::signTask(task), &files);
  EXPECT_EQ(result.code(),
            static_cast<int>(absl::StatusCode::kFailedPrecondition));
  EXPECT_NE(result.message().find("holds 100"), std::string::npos)
      << result.message();
}

TEST_F(TaskRunnerTest, SmallOutputsStayInlineOverTheLocalLink) {
  v1::Task task = axpyTask(256, "small");
  LocalFiles files;
  files.outputsAsFiles = true;
  v1::TaskResult result = runner->run(task, &files);
  ASSERT_EQ(result.code(), 0) << result.message();
  EXPECT_TRUE(files.outputs.empty());
  expectAxpy(task, result.outputs(0).data());
}

TEST_F(TaskRunnerTest, MidSizeOutputsGoInFilesOnlyForACallerThatMapsThem) {
  // One output of 256 KiB: under the inline limit, over the caller's file
  // threshold.
  constexpr int kN = (256 << 10) / 4;
  static_assert(int64_t{kN} * 4 >= TaskRunner::kMinCallerFileBytes &&
                int64_t{kN} * 4 <= TaskRunner::kMaxInlineOutputBytes);
  v1::Task task = axpyTask(kN, "mid");
  LocalFiles forKilnd;
  forKilnd.outputsAsFiles = true;
  v1::TaskResult inlined = runner->run(task, &forKilnd);
  ASSERT_EQ(inlined.code(), 0) << inlined.message();
  EXPECT_TRUE(forKilnd.outputs.empty()) << "kilnd would store a file as a blob";
  expectAxpy(task, inlined.outputs(0).data());

  LocalFiles forClient;
  forClient.outputsAsFiles = true;
  forClient.callerMapsOutputs = true;
  v1::TaskResult filed = runner->run(task, &forClient);
  ASSERT_EQ(filed.code(), 0) << filed.message();
  ASSERT_EQ(forClient.outputs.size(), 1u);
  EXPECT_EQ(forClient.outputs[0].first, 0);
  EXPECT_EQ(filed.outputs(0).payload_case(), v1::Tensor::PAYLOAD_NOT_SET);
  std::string out(size_t{kN} * 4, '\0');
  ASSERT_EQ(::pread(forClient.outputs[0].second.get(), out.data(), out.size(), 0),
            static_cast<ssize_t>(out.size()));
  expectAxpy(task, out);

  // Under the threshold, a caller that maps files still gets bytes inline.
  v1::Task small = axpyTask(1024, "small");
  LocalFiles smallFiles;
  smallFiles.outputsAsFiles = true;
  smallFiles.callerMapsOutputs = true;
  v1::TaskResult kept = runner->run(small, &smallFiles);
  ASSERT_EQ(kept.code(), 0) << kept.message();
  EXPECT_TRUE(smallFiles.outputs.empty());
  expectAxpy(small, kept.outputs(0).data());
}

TEST_F(TaskRunnerTest, AMissingArtifactBecomesNotFound) {
  v1::Task task = axpyTask(8, "t1");
  *task.mutable_record()->mutable_artifact() = digestOf("not stored");
  v1::TaskResult result = runner->run(test::signTask(task));
  EXPECT_EQ(result.code(), static_cast<int>(absl::StatusCode::kNotFound));
  EXPECT_NE(result.message().find("artifact"), std::string::npos)
      << result.message();
  EXPECT_EQ(result.outputs_size(), 0);
}

TEST_F(TaskRunnerTest, ValidationFailuresNameTheProblem) {
  struct Case {
    std::string name;
    std::function<void(v1::Task &)> mutate;
    absl::StatusCode code;
    std::string mentions;
  };
  std::vector<Case> cases = {
      {"wrong target",
       [](v1::Task &t) { t.mutable_record()->mutable_manifest()->set_target("mdla"); },
       absl::StatusCode::kFailedPrecondition, "mdla"},
      {"no entry symbol",
       [](v1::Task &t) { t.mutable_record()->mutable_manifest()->clear_entry_symbol(); },
       absl::StatusCode::kInvalidArgument, "entry_symbol"},
      {"missing input", [](v1::Task &t) { t.clear_inputs(); },
       absl::StatusCode::kInvalidArgument, "inputs"},
      {"short input",
       [](v1::Task &t) { t.mutable_inputs(0)->set_data("abcd"); },
       absl::StatusCode::kInvalidArgument, "'x'"},
      {"wrong input type",
       [](v1::Task &t) {
         t.mutable_inputs(0)->mutable_type()->set_dtype(v1::DTYPE_I32);
       },
       absl::StatusCode::kInvalidArgument, "i32[8]"},
      {"parameter of the wrong size",
       [](v1::Task &t) { *t.mutable_parameters(0) = digestOf("xyz"); },
       absl::StatusCode::kInvalidArgument, "'a'"},
      {"bad parameter digest",
       [](v1::Task &t) { t.mutable_parameters(0)->set_hash("zz"); },
       absl::StatusCode::kInvalidArgument, "parameter 0"},
      {"no record", [](v1::Task &t) { t.clear_record(); },
       absl::StatusCode::kInvalidArgument, "record"},
  };
  for (const Case &c : cases) {
    v1::Task task = axpyTask(8, "t");
    c.mutate(task);
    v1::TaskResult result = runner->run(task);
    EXPECT_EQ(result.code(), static_cast<int>(c.code))
        << c.name << ": " << result.message();
    EXPECT_NE(result.message().find(c.mentions), std::string::npos)
        << c.name << ": " << result.message();
  }
}

TEST_F(TaskRunnerTest, ACorruptParameterFromTheDaemonIsDataLoss) {
  v1::Task task = axpyTask(8, "t1");
  blobs.addRaw(task.parameters(0), std::string(32, '\x01'));
  v1::TaskResult result = runner->run(task);
  EXPECT_EQ(result.code(), static_cast<int>(absl::StatusCode::kDataLoss))
      << result.message();
  EXPECT_NE(result.message().find("parameter 0 ('a')"), std::string::npos)
      << result.message();
}

TEST_F(TaskRunnerTest, CodeLoadsOnlyForTasksTheDaemonSigned) {
  v1::Task genuine = axpyTask(8, "t1");
  absl::StatusOr<TaskSigningKey> otherKey = TaskSigningKey::generate();
  ASSERT_TRUE(otherKey.ok());
  struct Case {
    std::string name;
    std::function<void(v1::Task &)> forge;
  };
  std::vector<Case> cases = {
      {"unsigned", [](v1::Task &t) { t.clear_signature(); }},
      {"signed with another key",
       [&](v1::Task &t) {
         t.set_signature(*otherKey->sign(taskSigningMessage(t)));
       }},
      {"artifact swapped after signing",
       [&](v1::Task &t) {
         *t.mutable_record()->mutable_artifact() =
             blobs.add("\x7f" "ELF not kilnd's");
       }},
      {"entry symbol swapped after signing",
       [](v1::Task &t) {
         t.mutable_record()->mutable_manifest()->set_entry_symbol("other");
       }},
      {"signature garbled",
       [](v1::Task &t) { (*t.mutable_signature())[5] ^= 0x40; }},
  };
  for (const Case &c : cases) {
    v1::Task forged = genuine;
    c.forge(forged);
    int readsBefore = blobs.reads.load();
    v1::TaskResult result = runner->run(forged);
    EXPECT_EQ(result.code(),
              static_cast<int>(absl::StatusCode::kPermissionDenied))
        << c.name << ": " << result.message();
    EXPECT_NE(result.message().find("signature"), std::string::npos)
        << c.name << ": " << result.message();
    EXPECT_EQ(blobs.reads.load(), readsBefore)
        << c.name << ": the artifact was fetched";
    EXPECT_EQ(runner->loadedExecutables(), 0u) << c.name;
  }
  // The genuine task runs; a forged signature does not ride on its load.
  v1::TaskResult result = runner->run(genuine);
  ASSERT_EQ(result.code(), 0) << result.message();
  v1::Task unsigned_ = genuine;
  unsigned_.clear_signature();
  EXPECT_EQ(runner->run(unsigned_).code(),
            static_cast<int>(absl::StatusCode::kPermissionDenied));
}

TEST_F(TaskRunnerTest, WithoutATaskKeyNothingLoads) {
  TaskRunner keyless(backend, *cache, resident, blobs);
  v1::TaskResult result = keyless.run(axpyTask(8, "t1"));
  EXPECT_EQ(result.code(),
            static_cast<int>(absl::StatusCode::kFailedPrecondition));
  EXPECT_NE(result.message().find("--task-verify-key"), std::string::npos)
      << result.message();
  EXPECT_EQ(keyless.loadedExecutables(), 0u);
}

} // namespace
} // namespace kiln::agent
