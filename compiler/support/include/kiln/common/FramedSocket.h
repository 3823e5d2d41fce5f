//===- FramedSocket.h - messages and file descriptors over a socketpair ---===//
//
// This file declares FramedSocket, the transport of the local link between
// kilnd and an agent it started: length-prefixed frames over a connected
// AF_UNIX stream socket, each carrying up to kMaxFiles file descriptors
// (SCM_RIGHTS), so tensors travel as shared files instead of bytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/UniqueFd.h"

#include "absl/status/statusor.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace kiln {

/// One end of a local link. send() may be called from several threads at
/// once; receive() from one thread at a time.
class FramedSocket {
public:
  /// Descriptors one frame carries at most.
  static constexpr size_t kMaxFiles = 64;
  /// The largest frame payload accepted (a task or result message; tensor
  /// bytes travel in the files).
  static constexpr uint64_t kMaxFrameBytes = uint64_t{64} << 20;

  explicit FramedSocket(UniqueFd socket) : socket(std::move(socket)) {}
  /// Shuts the socket down first if a frame is still going in the
  /// background (send()), so that its thread ends.
  ~FramedSocket();

  /// What receive() accepts from an untrusted peer: frames of at most
  /// `frameBytes` (at most kMaxFrameBytes) carrying at most `files`
  /// descriptors (more are closed unread and the frame is DATA_LOSS).
  void limitFrames(uint64_t frameBytes, size_t files);

  /// receive() fails with DEADLINE_EXCEEDED when its frame has not fully
  /// arrived by `deadline` (time_point::max(): no limit).
  void setReceiveDeadline(std::chrono::steady_clock::time_point deadline) {
    receiveDeadline = deadline;
  }

  /// A connected pair (both close-on-exec).
  static absl::StatusOr<std::pair<UniqueFd, UniqueFd>> pair();

  /// Sends `bytes` and duplicates of `files` as one frame. UNAVAILABLE when
  /// the peer is gone; INVALID_ARGUMENT past kMaxFiles or kMaxFrameBytes.
  ///
  /// With a `deadline`, the caller waits no longer than that, for the send
  /// lock and for room: DEADLINE_EXCEEDED, with nothing of the frame sent
  /// and the link as it was, when the peer takes none of it by then (it is
  /// not reading: stuck, or all its threads busy) or another frame still
  /// goes. A frame the peer took part of by the deadline is finished by a
  /// background thread (a copy of the rest; the descriptors went with the
  /// first byte) and send() returns OK: the frame arrives whole whenever
  /// the peer reads on, and the next sender waits for it as for any frame.
  /// Without one, the send blocks (as long as SO_SNDTIMEO lets it).
  absl::Status send(std::string_view bytes, const std::vector<int> &files = {},
                    std::chrono::steady_clock::time_point deadline =
                        std::chrono::steady_clock::time_point::max());

  /// Blocks for the next frame. UNAVAILABLE when the peer closed its end (or
  /// shutdown() was called); DATA_LOSS for a malformed frame.
  absl::Status receive(std::string &bytes, std::vector<UniqueFd> &files);

  /// Polls the socket without sleeping, for up to `window`, until it has
  /// bytes to read or its peer hung up (true), or the window passes
  /// (false). A reader that expects its peer's next frame within
  /// microseconds spins here before receive(): a thread that sleeps is
  /// woken by the kernel, which on a VM whose other vCPU halted costs a
  /// cross-CPU interrupt and tens of microseconds (about 25 us each way
  /// measured here, against about 3 us for a spinning reader).
  bool pollReadable(std::chrono::microseconds window);

  /// Sleeps until the socket has bytes to read or its peer hung up (true),
  /// or `deadline` passes (false), without reading.
  bool waitReadable(std::chrono::steady_clock::time_point deadline);

  /// Sleeps until the peer hangs up or shutdown() is called (true), or
  /// `alsoReadable` (a descriptor, -1 for none) has bytes to read (false),
  /// without waking for the frames that arrive meanwhile (they stay
  /// unread).
  bool waitHangUp(int alsoReadable = -1);

  /// Ends both directions: a blocked receive() returns, later sends fail.
  void shutdown();

  int fd() const { return socket.get(); }

private:
  /// Reads exactly `size` bytes, within the receive deadline.
  absl::Status readFully(char *data, size_t size);
  /// Waits until the socket is readable or the receive deadline passes.
  absl::Status awaitReadable();

  UniqueFd socket;
  uint64_t maxFrameBytes = kMaxFrameBytes;
  size_t maxFiles = kMaxFiles;
  std::chrono::steady_clock::time_point receiveDeadline =
      std::chrono::steady_clock::time_point::max();
  /// Takes the right to send (one frame at a time) by `deadline`.
  bool beginSending(std::chrono::steady_clock::time_point deadline);
  void endSending();
  /// Sends `rest`, the end of a frame, on `flusher`; it ends the sending.
  void finishInBackground(std::string rest);

  std::mutex sendState;
  std::condition_variable sendIdle;
  bool sending = false;
  /// The thread finishing a frame cut by its sender's deadline.
  std::thread flusher;
};

} // namespace kiln
