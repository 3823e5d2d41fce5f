//===- TestSupport.cpp - helpers shared by the agent tests ----------------===//
//
// This file implements the agent tests' temp dirs, compiler driver and
// in-memory blob service.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/common/Digest.h"

#include "absl/strings/str_cat.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#ifndef KILN_TEST_C_COMPILER
#error "KILN_TEST_C_COMPILER must name the C compiler"
#endif

namespace fs = std::filesystem;

namespace kiln::agent::test {

TempDir::TempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(base && *base ? base : "/tmp", "/kiln-agent-test-XXXXXX");
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (!::mkdtemp(buffer.data()))
    std::abort();
  dir = buffer.data();
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

namespace {

absl::StatusOr<fs::path> compileWith(const std::string &compiler,
                                     const fs::path &dir,
                                     const std::string &name,
                                     const std::string &cSource) {
  fs::path source = dir / (name + ".c");
  fs::path output = dir / (name + ".so");
  fs::path log = dir / (name + ".log");
  std::ofstream(source) << cSource;
  std::string command =
      absl::StrCat("'", compiler, "' -shared -fPIC -O1 -o '",
                   output.string(), "' '", source.string(), "' > '",
                   log.string(), "' 2>&1");
  if (std::system(command.c_str()) != 0)
    return absl::InternalError(absl::StrCat("compiling ", name,
                                            " failed: ", readFileBytes(log)));
  return output;
}

} // namespace

absl::StatusOr<fs::path> compileSharedObject(const fs::path &dir,
                                             const std::string &name,
                                             const std::string &cSource) {
  return compileWith(KILN_TEST_C_COMPILER, dir, name, cSource);
}

absl::StatusOr<fs::path>
compileRiscv64SharedObject(const fs::path &dir, const std::string &name,
                           const std::string &cSource) {
  std::string compiler = KILN_TEST_RISCV64_CC;
  if (compiler.empty())
    return absl::FailedPreconditionError(
        "this build found no riscv64-linux-gnu-gcc");
  return compileWith(compiler, dir, name + "-rv64", cSource);
}

void writeFileBytes(const fs::path &path, const std::string &bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string readFileBytes(const fs::path &path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

std::string axpyKernelSource(int n) {
  return absl::StrCat(R"(
void kiln_invoke(void **b) {
  const float *a = (const float *)b[0];
  const float *x = (const float *)b[1];
  float *out = (float *)b[2];
  for (int i = 0; i < )",
                      n, R"(; ++i)
    out[i] = a[i] + 2.0f * x[i];
}
)");
}

v1::ExecutableRecord axpyRecord(int n, const std::string &artifactBytes) {
  v1::ExecutableRecord record;
  v1::ExecutableManifest &manifest = *record.mutable_manifest();
  manifest.set_entry_symbol("kiln_invoke");
  manifest.set_target("cpu");
  manifest.set_format("elf-shared-object");
  for (auto [list, name] :
       {std::pair{manifest.mutable_parameters(), "a"},
        std::pair{manifest.mutable_inputs(), "x"},
        std::pair{manifest.mutable_outputs(), "out"}}) {
    v1::ManifestArgument *argument = list->Add();
    argument->set_name(name);
    argument->mutable_type()->set_dtype(v1::DTYPE_F32);
    argument->mutable_type()->add_shape(n);
  }
  *record.mutable_artifact() = digestOf(artifactBytes);
  return record;
}

std::string floatBytes(const std::vector<float> &values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  if (!bytes.empty())
    std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<float> bytesToFloats(const std::string &bytes) {
  std::vector<float> values(bytes.size() / sizeof(float));
  if (!values.empty())
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

v1::Digest MemoryBlobService::add(const std::string &bytes) {
  v1::Digest digest = digestOf(bytes);
  addRaw(digest, bytes);
  return digest;
}

void MemoryBlobService::addRaw(const v1::Digest &digest,
                               const std::string &bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  blobs[digest.hash()] = bytes;
}

bool MemoryBlobService::has(const std::string &hash) {
  std::lock_guard<std::mutex> lock(mutex);
  return blobs.count(hash) != 0;
}

std::string MemoryBlobService::get(const std::string &hash) {
  std::lock_guard<std::mutex> lock(mutex);
  return blobs[hash];
}

absl::Status MemoryBlobService::read(const v1::Digest &digest,
                                     const ChunkSink &sink) {
  ++reads;
  std::string bytes;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = blobs.find(digest.hash());
    if (it == blobs.end())
      return absl::NotFoundError(
          absl::StrCat("blob ", formatDigest(digest), " not found"));
    bytes = it->second;
  }
  // Small chunks, so that reassembly is exercised.
  constexpr size_t kChunk = 1000;
  for (size_t offset = 0; offset < bytes.size(); offset += kChunk) {
    absl::Status status =
        sink(std::string_view(bytes).substr(offset, kChunk));
    if (!status.ok())
      return status;
  }
  return absl::OkStatus();
}

absl::Status MemoryBlobService::write(const v1::Digest &digest,
                                      std::string_view bytes) {
  ++writes;
  if (!(digestOf(bytes).hash() == digest.hash()))
    return absl::InvalidArgumentError("digest mismatch");
  addRaw(digest, std::string(bytes));
  return absl::OkStatus();
}

const TaskSigningKey &taskKey() {
  static const TaskSigningKey key = *TaskSigningKey::generate();
  return key;
}

std::shared_ptr<const TaskVerifier> taskVerifier() {
  static const auto verifier = std::make_shared<const TaskVerifier>(
      *TaskVerifier::fromPem(taskKey().publicKeyPem()));
  return verifier;
}

v1::Task &signTask(v1::Task &task) {
  task.set_signature(*taskKey().sign(taskSigningMessage(task)));
  return task;
}

} // namespace kiln::agent::test
