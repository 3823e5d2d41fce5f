//===- DirectChannels.h - a co-located client's calls, without kilnd -*- C++ -*-===//
//
// This file declares DirectChannels: the sockets kilnd hands out with a
// local call that asked for one (kiln.v1.LocalExecute.open_direct). Each is
// bound to the task kilnd sent with it: that task's executable, signature,
// parameters and device. A client then sends LocalClientFrame.execute frames
// that hold only inputs, and the agent runs each as that task with these
// inputs and answers with a kiln.v1.LocalReply, kilnd staying out of the
// data path. A channel may also ask for an exchange buffer (ExchangeBuffer)
// through which its calls' tensors travel instead of the socket. The client is not trusted: every frame is checked as kilnd
// checks a local call, and the task runner checks it again as it checks
// kilnd's tasks.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/ExchangeBuffer.h"
#include "kiln/agent/TaskRunner.h"

#include "kiln/common/FramedSocket.h"
#include "kiln/v1/executor.pb.h"

#include <atomic>
#include <chrono>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <thread>

namespace kiln::agent {

/// Holds one of `slots` (nothing when null) while it lives: a task's turn
/// among the agent's --task-threads.
class RunSlot {
public:
  explicit RunSlot(std::counting_semaphore<> *slots) : slots(slots) {
    if (slots)
      slots->acquire();
  }
  ~RunSlot() {
    if (slots)
      slots->release();
  }
  RunSlot(const RunSlot &) = delete;
  RunSlot &operator=(const RunSlot &) = delete;

private:
  std::counting_semaphore<> *slots;
};

/// How a direct channel waits for its client's next call (--direct-poll-us).
struct DirectPoll {
  /// How long a channel polls after answering a call that ran; 0: never.
  /// With a larger `cap`, the shortest window (see nextPollWindow).
  std::chrono::microseconds window{0};
  /// The longest window a channel adapts its own to; at most `window`:
  /// every channel polls `window`.
  std::chrono::microseconds cap{0};
  /// Channels that poll at once, at most: the CPUs the agent's runs leave
  /// free. A channel that finds them all polling sleeps at once, and tells
  /// its client so (LocalReply.poll_us 0).
  int pollers = 0;
};

/// A channel's next poll window, from its `current` one and the `gap`
/// after which its client sent a call following the last answer. Twice
/// the gap (room for its jitter) when that is longer than `current`;
/// else `current` less a quarter, but not below twice the gap: it grows
/// at once and shrinks over a few calls, so that one quick call between
/// slower ones does not cut it. Always within [poll.window, poll.cap];
/// poll.window after a gap longer than poll.cap, and always when the
/// window is fixed (poll.cap at most poll.window). A client that calls
/// again within the cap is caught by the poll, as KVM's halt polling grows
/// to catch a vCPU's next wake-up; one that calls less often costs the
/// shortest window per call.
std::chrono::microseconds nextPollWindow(const DirectPoll &poll,
                                         std::chrono::microseconds current,
                                         std::chrono::microseconds gap);

class DirectChannels {
public:
  /// Channels one agent serves at once by default (a thread each).
  static constexpr size_t kDefaultLimit = 64;
  /// A call's frame (inline inputs) takes at most this many bytes, as on
  /// kilnd's local socket.
  static constexpr uint64_t kMaxCallFrameBytes = uint64_t{8} << 20;
  /// A channel with no call for this long is closed (the client falls back
  /// to kilnd, which opens another).
  static constexpr std::chrono::minutes kIdleTimeout{10};
  /// A reply the client does not read for this long ends the channel.
  static constexpr std::chrono::seconds kReplyTimeout{60};

  /// How long a channel's thread polls for the next call after answering
  /// one, before it sleeps, where the agent's runs leave a CPU free
  /// (--direct-poll-us auto): at least kDefaultPoll, and up to
  /// kDefaultPollCap for a client that calls again within it.
  static constexpr std::chrono::microseconds kDefaultPoll{100};
  static constexpr std::chrono::microseconds kDefaultPollCap{1000};

  /// Runs calls through `runner`, which must outlive this, each holding
  /// one of `runSlots` (shared with the local link's tasks, so that the
  /// agent's --task-threads bounds everything it runs at once; null: no
  /// bound). After answering a call that ran, a channel polls as `poll`
  /// says for its client's next call, which a client calling in a loop
  /// sends within tens of microseconds (by default it never polls).
  explicit DirectChannels(TaskRunner &runner,
                          std::counting_semaphore<> *runSlots = nullptr,
                          size_t limit = kDefaultLimit, DirectPoll poll = {});
  /// Ends every channel and waits for the calls running on them.
  ~DirectChannels();
  DirectChannels(const DirectChannels &) = delete;
  DirectChannels &operator=(const DirectChannels &) = delete;

  /// Serves calls on `socket` as `binding` (a task kilnd sent and this agent
  /// ran: its inputs, ids, kept outputs and releases are dropped) with
  /// `record`. False, and the socket closed, when `limit` channels are open.
  bool open(UniqueFd socket, const v1::Task &binding,
            std::shared_ptr<const v1::ExecutableRecord> record);

  /// Channels being served.
  size_t openCount();

  /// Copies the inputs a call placed in the channel's `exchange` buffer
  /// (null: the channel has none) into `tensors.inputCopies` (its file
  /// inputs already paired), after checking the call's slices and its
  /// region for outputs; INVALID_ARGUMENT naming what is wrong. The call
  /// must name as many inputs as `manifest` (checked first), and the slices
  /// must ascend without overlap (each checked before its copy): what is
  /// copied never exceeds the buffer, however the frame is made.
  static absl::Status takeExchangeInputs(const v1::LocalExecute &call,
                                         const ExchangeBuffer *exchange,
                                         const v1::ExecutableManifest &manifest,
                                         LocalFiles &tensors);

private:
  struct Channel {
    std::unique_ptr<FramedSocket> socket;
    std::thread thread;
    std::atomic<bool> done{false};
  };

  void serve(FramedSocket &socket, v1::Task task,
             const v1::ExecutableRecord &record, uint64_t id);
  /// Answers a LocalExchange: `exchange` replaced by a new buffer (its
  /// file goes with the answer), or emptied and the answer an error.
  static v1::LocalReply exchangeBuffer(const v1::LocalExchange &ask,
                                       const std::vector<UniqueFd> &files,
                                       std::optional<ExchangeBuffer> &exchange);
  /// Runs one call on `task` (the binding), with the channel's `exchange`
  /// buffer (null: none yet); the reply and its files.
  v1::LocalReply call(v1::Task &task, const v1::ExecutableRecord &record,
                      v1::LocalExecute &execute, std::vector<UniqueFd> &files,
                      ExchangeBuffer *exchange, LocalFiles &tensors,
                      std::vector<int> &replyFiles);
  /// Joins the threads of channels that ended; under `mutex`.
  void reap();

  TaskRunner &runner;
  std::counting_semaphore<> *runSlots;
  const size_t limit;
  const DirectPoll poll;
  std::atomic<int> polling{0}; ///< channels polling now
  /// Whether a channel may poll after its answer: a turn among
  /// poll.pollers, which the caller gives back with endPollTurn().
  bool takePollTurn();
  void endPollTurn() { polling.fetch_sub(1); }
  std::mutex mutex;
  std::list<Channel> channels;
  bool stopping = false;
  std::atomic<uint64_t> nextId{1};
};

} // namespace kiln::agent
