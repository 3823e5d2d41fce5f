//===- BazelRemote.h - a real bazel-remote for tests ------------*- C++ -*-===//
//
// This file implements a test helper that runs bazel-remote (the REAPI cache
// server scripts/install_deps.sh builds into $KILN_TOOLS_DIR/bin) on a free
// loopback port with uncompressed storage, so tests can reach its blobs on
// disk, and stops or restarts it on demand.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

extern char **environ;

namespace kiln::server::testing {

/// The bazel-remote binary: $KILN_BAZEL_REMOTE, else
/// $KILN_TOOLS_DIR/bin/bazel-remote (default tools dir ~/.cache/kiln/tools).
inline std::filesystem::path bazelRemoteBinary() {
  if (const char *path = std::getenv("KILN_BAZEL_REMOTE"); path && *path)
    return path;
  const char *tools = std::getenv("KILN_TOOLS_DIR");
  const char *home = std::getenv("HOME");
  std::filesystem::path dir =
      tools && *tools ? std::filesystem::path(tools)
                      : std::filesystem::path(home ? home : "/root") / ".cache/kiln/tools";
  return dir / "bin" / "bazel-remote";
}

/// A loopback TCP port nothing listens on at the time of the call.
inline int freeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

class BazelRemote {
public:
  explicit BazelRemote(std::filesystem::path dir)
      : dir(std::move(dir)), grpcPort(freeLoopbackPort()),
        httpPort(freeLoopbackPort()) {}
  ~BazelRemote() { stop(); }

  /// Starts it and waits until its gRPC port accepts connections; false
  /// (with a test failure naming why) when it cannot.
  bool start() {
    std::filesystem::path binary = bazelRemoteBinary();
    if (!std::filesystem::exists(binary)) {
      ADD_FAILURE() << "no bazel-remote at " << binary
                    << ": scripts/install_deps.sh builds it";
      return false;
    }
    std::vector<std::string> args = {
        binary.string(),  "--dir", dir.string(), "--max_size", "1",
        "--storage_mode", "uncompressed", "--grpc_address", address(),
        "--http_address", "127.0.0.1:" + std::to_string(httpPort)};
    std::vector<char *> argv;
    for (std::string &arg : args)
      argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    std::string log = (dir.parent_path() / "bazel-remote.log").string();
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) {
      ADD_FAILURE() << "cannot start bazel-remote: " << strerror(error);
      pid = -1;
      return false;
    }
    auto channel = grpc::CreateChannel(address(), grpc::InsecureChannelCredentials());
    if (!channel->WaitForConnected(std::chrono::system_clock::now() +
                                   std::chrono::seconds(30))) {
      ADD_FAILURE() << "bazel-remote did not listen on " << address()
                    << " within 30 s (log: " << log << ")";
      return false;
    }
    return true;
  }

  /// Kills it (SIGKILL: a crash, not a clean shutdown) and reaps it.
  void stop() {
    if (pid <= 0)
      return;
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    pid = -1;
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(grpcPort); }
  std::string url() const { return "grpc://" + address(); }

  /// The file bazel-remote keeps CAS blob `hash` in (uncompressed mode);
  /// empty when it has none.
  std::filesystem::path casFile(const std::string &hash) const {
    std::filesystem::path shard = dir / "cas.v2" / hash.substr(0, 2);
    std::error_code error;
    for (const auto &entry : std::filesystem::directory_iterator(shard, error))
      if (entry.path().filename().string().rfind(hash, 0) == 0)
        return entry.path();
    return {};
  }

  /// Flips the byte at `offset` of CAS blob `hash` on bazel-remote's disk
  /// (it does not check what it serves); false when it has no such blob.
  bool tamper(const std::string &hash, std::streamoff offset) const {
    std::filesystem::path file = casFile(hash);
    if (file.empty())
      return false;
    std::fstream blob(file, std::ios::in | std::ios::out | std::ios::binary);
    blob.seekg(offset);
    char byte = static_cast<char>(blob.get());
    blob.seekp(offset);
    blob.put(static_cast<char>(~byte));
    return static_cast<bool>(blob);
  }

private:
  std::filesystem::path dir;
  int grpcPort, httpPort;
  pid_t pid = -1;
};

} // namespace kiln::server::testing
