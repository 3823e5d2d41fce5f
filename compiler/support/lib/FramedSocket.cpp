//===- FramedSocket.cpp - messages and file descriptors over a socketpair -===//
//
// This file implements FramedSocket. A frame is a 16-byte header (magic,
// file count, payload length) and the payload, sent with its descriptors in
// one sendmsg (the socket may take it in parts).
//
//===----------------------------------------------------------------------===//
#include "kiln/common/FramedSocket.h"

#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kiln {
namespace {

constexpr uint32_t kMagic = 0x4b4c4e4b; // "KNLK"

struct FrameHeader {
  uint32_t magic;
  uint32_t fileCount;
  uint64_t length;
};

absl::Status peerGone(const char *what) {
  return absl::UnavailableError(
      absl::StrCat("local link: ", what, ": ", std::strerror(errno)));
}

/// Sleeps until `fd` has `events` (POLLIN: bytes to read; POLLOUT: room),
/// or its peer is gone, or poll fails (true: the read or send that follows
/// tells which), or `deadline` passes (false).
bool waitFor(int fd, short events,
             std::chrono::steady_clock::time_point deadline) {
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return false;
    // A day at most per sleep: ppoll's timespec takes any deadline then.
    left = std::min<std::chrono::nanoseconds>(left, std::chrono::hours(24));
    timespec timeout{static_cast<time_t>(left.count() / 1'000'000'000),
                     static_cast<long>(left.count() % 1'000'000'000)};
    pollfd wait{fd, events, 0};
    int ready = ::ppoll(&wait, 1, &timeout, nullptr);
    if (ready > 0 || (ready < 0 && errno != EINTR))
      return true;
  }
}

constexpr auto kNoDeadline = std::chrono::steady_clock::time_point::max();

/// Sends all of `message`; `sent` counts the bytes that went. Its
/// descriptors go with the first byte. Without a deadline sendmsg blocks
/// (and an EAGAIN, SO_SNDTIMEO's, is the peer gone, as it always was);
/// with one, it does not, and the caller sleeps for room until then.
/// UNAVAILABLE when the peer is gone.
absl::Status sendAll(int fd, msghdr &message, size_t &sent,
                     std::chrono::steady_clock::time_point deadline) {
  int flags = MSG_NOSIGNAL | (deadline == kNoDeadline ? 0 : MSG_DONTWAIT);
  while (message.msg_iovlen > 0) {
    ssize_t put = ::sendmsg(fd, &message, flags);
    if (put <= 0) {
      if (put < 0 && errno == EINTR)
        continue;
      if ((put < 0 && errno != EAGAIN && errno != EWOULDBLOCK) ||
          deadline == kNoDeadline)
        return peerGone("sendmsg");
      if (!waitFor(fd, POLLOUT, deadline))
        return absl::DeadlineExceededError("the peer took no more bytes");
      continue;
    }
    sent += static_cast<size_t>(put);
    message.msg_control = nullptr;
    message.msg_controllen = 0;
    // Past what went: whole iovecs, then into the one it stopped in.
    size_t left = static_cast<size_t>(put);
    while (message.msg_iovlen > 0 && left >= message.msg_iov->iov_len) {
      left -= message.msg_iov->iov_len;
      ++message.msg_iov;
      --message.msg_iovlen;
    }
    if (message.msg_iovlen > 0) {
      message.msg_iov->iov_base = static_cast<char *>(message.msg_iov->iov_base) + left;
      message.msg_iov->iov_len -= left;
    }
  }
  return absl::OkStatus();
}

} // namespace

void FramedSocket::limitFrames(uint64_t frameBytes, size_t files) {
  maxFrameBytes = std::min(frameBytes, kMaxFrameBytes);
  maxFiles = std::min(files, kMaxFiles);
}

absl::Status FramedSocket::awaitReadable() {
  if (receiveDeadline == std::chrono::steady_clock::time_point::max())
    return absl::OkStatus();
  // A failing poll counts as readable: recvmsg then reports what is wrong.
  if (!waitReadable(receiveDeadline))
    return absl::DeadlineExceededError(
        "local link: the peer did not send its frame in time");
  return absl::OkStatus();
}

bool FramedSocket::pollReadable(std::chrono::microseconds window) {
  if (window.count() <= 0)
    return false;
  auto end = std::chrono::steady_clock::now() + window;
  do {
    pollfd ready{socket.get(), POLLIN, 0};
    int got = ::poll(&ready, 1, 0);
    if (got > 0)
      return true; // readable, or hung up: receive() tells which
    if (got < 0 && errno != EINTR)
      return false;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  } while (std::chrono::steady_clock::now() < end);
  return false;
}

bool FramedSocket::waitReadable(std::chrono::steady_clock::time_point deadline) {
  return waitFor(socket.get(), POLLIN, deadline);
}

bool FramedSocket::waitHangUp(int alsoReadable) {
  // POLLRDHUP alone: data arriving (POLLIN) does not wake this poll; the
  // peer's close or a shutdown() does (POLLRDHUP, or POLLHUP, which poll
  // always reports).
  pollfd wait[2] = {{socket.get(), POLLRDHUP, 0}, {alsoReadable, POLLIN, 0}};
  nfds_t count = alsoReadable >= 0 ? 2 : 1;
  while (true) {
    int ready = ::poll(wait, count, -1);
    if (ready < 0 && errno == EINTR)
      continue;
    // A failing poll is taken as a hang-up: the caller then reads, and
    // receive() reports what is wrong.
    return ready < 0 || wait[0].revents != 0;
  }
}

absl::Status FramedSocket::readFully(char *data, size_t size) {
  while (size > 0) {
    RETURN_IF_ERROR(awaitReadable());
    ssize_t got = ::read(socket.get(), data, size);
    if (got == 0)
      return absl::UnavailableError("local link: the peer closed its end");
    if (got < 0) {
      if (errno == EINTR)
        continue;
      return peerGone("read");
    }
    data += got;
    size -= static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::pair<UniqueFd, UniqueFd>> FramedSocket::pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return absl::InternalError(
        absl::StrCat("socketpair: ", std::strerror(errno)));
  return std::make_pair(UniqueFd(fds[0]), UniqueFd(fds[1]));
}

absl::Status FramedSocket::send(std::string_view bytes,
                                const std::vector<int> &files,
                                std::chrono::steady_clock::time_point deadline) {
  if (files.size() > kMaxFiles || bytes.size() > kMaxFrameBytes)
    return absl::InvalidArgumentError(absl::StrCat(
        "local link: a frame of ", bytes.size(), " bytes and ", files.size(),
        " files is over the limit (", kMaxFrameBytes, " bytes, ", kMaxFiles,
        " files)"));
  FrameHeader header{kMagic, static_cast<uint32_t>(files.size()),
                     bytes.size()};
  // Header and message in one call: the peer wakes once per frame.
  iovec iov[2] = {{&header, sizeof header},
                  {const_cast<char *>(bytes.data()), bytes.size()}};
  msghdr message{};
  message.msg_iov = iov;
  message.msg_iovlen = bytes.empty() ? 1 : 2;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFiles)];
  if (!files.empty()) {
    size_t fdBytes = sizeof(int) * files.size();
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(fdBytes);
    cmsghdr *cmsg = CMSG_FIRSTHDR(&message);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(fdBytes);
    std::memcpy(CMSG_DATA(cmsg), files.data(), fdBytes);
  }
  if (!beginSending(deadline))
    return absl::DeadlineExceededError(
        "local link: another frame was still being sent at the deadline; "
        "nothing of this one was sent");
  size_t sent = 0;
  absl::Status status = sendAll(socket.get(), message, sent, deadline);
  if (absl::IsDeadlineExceeded(status) && sent > 0) {
    // Cut mid-frame: the rest goes on in the background, so that the
    // stream stays whole and the peer, reading on, gets the frame.
    std::string rest;
    for (size_t i = 0; i < message.msg_iovlen; ++i)
      rest.append(static_cast<const char *>(message.msg_iov[i].iov_base),
                  message.msg_iov[i].iov_len);
    finishInBackground(std::move(rest));
    return absl::OkStatus();
  }
  endSending();
  if (!absl::IsDeadlineExceeded(status))
    return status;
  return absl::DeadlineExceededError(absl::StrCat(
      "local link: the peer took none of a frame of ", sizeof header + bytes.size(),
      " bytes by the deadline (it is not reading: stuck, or all its threads "
      "busy)"));
}

bool FramedSocket::beginSending(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(sendState);
  auto idle = [this] { return !sending; };
  if (deadline == kNoDeadline)
    sendIdle.wait(lock, idle);
  else if (!sendIdle.wait_until(lock, deadline, idle))
    return false;
  sending = true;
  return true;
}

void FramedSocket::endSending() {
  {
    std::lock_guard<std::mutex> lock(sendState);
    sending = false;
  }
  sendIdle.notify_one();
}

void FramedSocket::finishInBackground(std::string rest) {
  // The previous flusher ended its sending before this frame could begin:
  // it is returning, if not gone.
  if (flusher.joinable())
    flusher.join();
  flusher = std::thread([this, rest = std::move(rest)]() mutable {
    iovec iov{rest.data(), rest.size()};
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    size_t sent = 0;
    // A peer gone meanwhile: whoever reads the link finds it ended.
    (void)sendAll(socket.get(), message, sent, kNoDeadline);
    endSending();
  });
}

FramedSocket::~FramedSocket() {
  if (!flusher.joinable())
    return;
  bool stillSending;
  {
    std::lock_guard<std::mutex> lock(sendState);
    stillSending = sending;
  }
  if (stillSending)
    shutdown(); // the flusher's send fails, and it ends
  flusher.join();
}

absl::Status FramedSocket::receive(std::string &bytes,
                                   std::vector<UniqueFd> &files) {
  files.clear();
  FrameHeader header{};
  iovec iov{&header, sizeof header};
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFiles)];
  // Room for maxFiles only: the kernel closes any more, and says so
  // (MSG_CTRUNC).
  if (maxFiles > 0) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * maxFiles);
  }
  RETURN_IF_ERROR(awaitReadable());
  ssize_t got;
  do {
    got = ::recvmsg(socket.get(), &message, MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  if (got == 0)
    return absl::UnavailableError("local link: the peer closed its end");
  if (got < 0)
    return peerGone("recvmsg");
  for (cmsghdr *cmsg = CMSG_FIRSTHDR(&message); cmsg;
       cmsg = CMSG_NXTHDR(&message, cmsg)) {
    if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
      continue;
    size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof fd);
      files.emplace_back(fd);
    }
  }
  if (message.msg_flags & MSG_CTRUNC)
    return absl::DataLossError("local link: a frame carried too many files");
  if (absl::Status status =
          readFully(reinterpret_cast<char *>(&header) + got,
                    sizeof header - static_cast<size_t>(got));
      !status.ok())
    return status;
  if (header.magic != kMagic ||
      header.length > std::min(maxFrameBytes, kMaxFrameBytes) ||
      header.fileCount != files.size())
    return absl::DataLossError(absl::StrCat(
        "local link: malformed frame header (", header.length, " bytes, ",
        header.fileCount, " files announced, ", files.size(), " received)"));
  bytes.resize(header.length);
  return readFully(bytes.data(), bytes.size());
}

void FramedSocket::shutdown() { ::shutdown(socket.get(), SHUT_RDWR); }

} // namespace kiln
