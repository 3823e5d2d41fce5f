//===- TestSupport.h - helpers shared by the agent tests ------------------===//
//
// This file declares temp directories, an in-memory DaemonBlobs and a helper
// that compiles C source into a real shared object with the system compiler.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/DaemonBlobs.h"

#include "kiln/common/TaskSignature.h"
#include "kiln/v1/executable.pb.h"

#include "absl/status/statusor.h"

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::agent::test {

/// A fresh directory, removed with everything in it on destruction.
class TempDir {
public:
  TempDir();
  ~TempDir();
  const std::filesystem::path &path() const { return dir; }

private:
  std::filesystem::path dir;
};

/// Compiles `cSource` with the C compiler CMake found into
/// `<dir>/<name>.so` (-shared -fPIC).
absl::StatusOr<std::filesystem::path>
compileSharedObject(const std::filesystem::path &dir, const std::string &name,
                    const std::string &cSource);

/// The same for riscv64 Linux, with riscv64-linux-gnu-gcc (the qemu agent's
/// tests); FAILED_PRECONDITION when this build has no such compiler.
absl::StatusOr<std::filesystem::path>
compileRiscv64SharedObject(const std::filesystem::path &dir,
                           const std::string &name, const std::string &cSource);

/// Reads a whole file.
std::string readFileBytes(const std::filesystem::path &path);
void writeFileBytes(const std::filesystem::path &path, const std::string &bytes);

/// C source of `void kiln_invoke(void **b)`: out = a + 2 * x over n floats,
/// where b = {a (parameter), x (input), out (output)}.
std::string axpyKernelSource(int n);

/// A manifest for axpyKernelSource(n): parameter a, input x, output out.
v1::ExecutableRecord axpyRecord(int n, const std::string &artifactBytes);

/// The tests' stand-in for kilnd's task key (one per test process).
const TaskSigningKey &taskKey();
/// Its public half, for TaskRunner::setTaskVerifier.
std::shared_ptr<const TaskVerifier> taskVerifier();
/// Signs `task` with taskKey(), as kilnd does; returns it.
v1::Task &signTask(v1::Task &task);

/// `values` as little-endian f32 bytes.
std::string floatBytes(const std::vector<float> &values);
std::vector<float> bytesToFloats(const std::string &bytes);

/// DaemonBlobs over a map; counts reads and writes. Thread-safe.
class MemoryBlobService : public DaemonBlobs {
public:
  /// Adds `bytes` and returns their digest.
  v1::Digest add(const std::string &bytes);
  /// Serves `bytes` for `digest` whatever they hash to (for corruption tests).
  void addRaw(const v1::Digest &digest, const std::string &bytes);
  bool has(const std::string &hash);
  std::string get(const std::string &hash);

  absl::Status read(const v1::Digest &digest, const ChunkSink &sink) override;
  absl::Status write(const v1::Digest &digest, std::string_view bytes) override;

  std::atomic<int> reads{0};
  std::atomic<int> writes{0};

private:
  std::mutex mutex;
  std::map<std::string, std::string> blobs;
};

} // namespace kiln::agent::test
