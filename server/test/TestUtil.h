//===- TestUtil.h - helpers shared by kilnd's unit tests --------*- C++ -*-===//
//
// This file implements a self-deleting temporary directory, a fixture with a
// fresh content store in one, and a helper that waits on a condition without
// fixed sleeps.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/store/ContentStore.h"
#include "kiln/server/store/ExecutableNamespace.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>

namespace kiln::server::testing {

/// A fresh directory under the test temp dir, removed on destruction.
class TempDir {
public:
  TempDir() {
    std::string pattern =
        (std::filesystem::path(::testing::TempDir()) / "kilnd-test-XXXXXX")
            .string();
    char *made = ::mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    dir = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  const std::filesystem::path &path() const { return dir; }

private:
  std::filesystem::path dir;
};

/// Yields until `condition()` holds or `timeout` passes; returns whether it
/// held. For observing state another thread reaches, never as a delay.
template <typename Condition>
bool eventually(Condition condition,
                std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto giveUp = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= giveUp)
      return false;
    std::this_thread::yield();
  }
  return true;
}

/// A fixture whose `store` is a fresh ContentStore in `temp`/cas.
class StoreTest : public ::testing::Test {
protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<ContentStore>> opened =
        ContentStore::open(temp.path() / "cas");
    ASSERT_TRUE(opened.ok()) << opened.status();
    store = std::move(*opened);
  }

  /// The namespace the caches list their executables in (one per test).
  ExecutableNamespace &executables() {
    if (!executableList)
      executableList = *ExecutableNamespace::open(temp.path() / "executables");
    return *executableList;
  }
  std::unique_ptr<ExecutableNamespace> executableList;
  TempDir temp;
  std::unique_ptr<ContentStore> store;
};

/// Files under `dir` whose name contains ".tmp." (unfinished writes).
inline int countTempFiles(const std::filesystem::path &dir) {
  int count = 0;
  for (const auto &entry : std::filesystem::recursive_directory_iterator(dir))
    if (entry.path().filename().string().find(".tmp.") != std::string::npos)
      ++count;
  return count;
}

/// The whole content of the file at `path`.
inline std::string readFile(const std::filesystem::path &path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

} // namespace kiln::server::testing
