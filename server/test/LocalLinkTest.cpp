//===- LocalLinkTest.cpp - frames, files and kilnd's end of a local link --===//
//
// This file tests FramedSocket (frames with descriptors over a socketpair,
// and every malformed or broken case), ContentStore's openBlob/putFile, and
// LocalAgentLink against a stand-in agent on the other end of a real
// socketpair: tasks carry their blob inputs' files, output memfds come back
// stored as blobs, and a result reaches the AgentConnection that awaits it.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "kiln/common/Digest.h"
#include "kiln/common/FramedSocket.h"
#include "kiln/server/sched/LocalAgentLink.h"
#include "kiln/server/store/ContentStore.h"
#include "kiln/worker/local_link.pb.h"

#include "absl/strings/str_cat.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kiln::server {
namespace {

std::string contents(int fd) {
  std::string bytes;
  char buffer[4096];
  ssize_t got;
  off_t at = 0;
  while ((got = ::pread(fd, buffer, sizeof buffer, at)) > 0) {
    bytes.append(buffer, static_cast<size_t>(got));
    at += got;
  }
  return bytes;
}

/// A memfd holding `bytes`, sealed the way agents seal their outputs unless
/// `sealed` is false.
UniqueFd memfdWith(const std::string &bytes, bool sealed = true) {
  UniqueFd fd(::memfd_create("test", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  EXPECT_EQ(::write(fd.get(), bytes.data(), bytes.size()),
            static_cast<ssize_t>(bytes.size()));
  if (sealed)
    EXPECT_EQ(::fcntl(fd.get(), F_ADD_SEALS,
                      F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE),
              0);
  return fd;
}

/// The bytes of the next frame `socket` receives ("" after a failure).
std::string nextFrame(FramedSocket &socket) {
  std::string bytes;
  std::vector<UniqueFd> files;
  EXPECT_TRUE(socket.receive(bytes, files).ok());
  return bytes;
}

TEST(FramedSocketTest, FramesCarryBytesAndFiles) {
  auto pair = FramedSocket::pair();
  ASSERT_TRUE(pair.ok()) << pair.status();
  FramedSocket a(std::move(pair->first)), b(std::move(pair->second));
  UniqueFd file = memfdWith("tensor bytes");
  // A frame larger than the socket's buffer, so it arrives in parts.
  std::string big(3 << 20, 'x');
  big[12345] = 'y';
  std::thread sender([&] {
    ASSERT_TRUE(a.send("first", {file.get()}).ok());
    ASSERT_TRUE(a.send(big).ok());
  });
  std::string bytes;
  std::vector<UniqueFd> files;
  ASSERT_TRUE(b.receive(bytes, files).ok());
  EXPECT_EQ(bytes, "first");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(files[0].get(), file.get()) << "a duplicate, not the same number";
  EXPECT_EQ(contents(files[0].get()), "tensor bytes");
  ASSERT_TRUE(b.receive(bytes, files).ok());
  EXPECT_EQ(bytes, big);
  EXPECT_TRUE(files.empty());
  sender.join();
}

TEST(FramedSocketTest, APeerThatClosesIsUnavailable) {
  auto pair = FramedSocket::pair();
  ASSERT_TRUE(pair.ok());
  FramedSocket b(std::move(pair->second));
  {
    FramedSocket a(std::move(pair->first));
  }
  std::string bytes;
  std::vector<UniqueFd> files;
  EXPECT_TRUE(absl::IsUnavailable(b.receive(bytes, files)));
  EXPECT_TRUE(absl::IsUnavailable(b.send("after")));
}

TEST(FramedSocketTest, ShutdownWakesAReceiver) {
  auto pair = FramedSocket::pair();
  ASSERT_TRUE(pair.ok());
  FramedSocket a(std::move(pair->first)), b(std::move(pair->second));
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    b.shutdown();
  });
  std::string bytes;
  std::vector<UniqueFd> files;
  EXPECT_TRUE(absl::IsUnavailable(b.receive(bytes, files)));
  waker.join();
}

TEST(FramedSocketTest, PollingSeesAFrameOrAHangUpAndOtherwiseEndsWithItsWindow) {
  auto pair = FramedSocket::pair();
  ASSERT_TRUE(pair.ok());
  FramedSocket a(std::move(pair->first)), b(std::move(pair->second));
  using std::chrono::microseconds;
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(b.pollReadable(microseconds(20'000))) << "nothing was sent";
  EXPECT_GE(std::chrono::steady_clock::now() - start, microseconds(20'000));
  EXPECT_FALSE(b.pollReadable(microseconds(0)));
  // A frame sent while the reader polls ends the poll; it is then read.
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(a.send("polled").ok());
  });
  EXPECT_TRUE(b.pollReadable(microseconds(10'000'000)));
  sender.join();
  std::string bytes;
  std::vector<UniqueFd> files;
  ASSERT_TRUE(b.receive(bytes, files).ok());
  EXPECT_EQ(bytes, "polled");
  // A peer that hangs up ends the poll too; receive() says it is gone.
  a.shutdown();
  EXPECT_TRUE(b.pollReadable(microseconds(10'000'000)));
  EXPECT_TRUE(absl::IsUnavailable(b.receive(bytes, files)));
}

TEST(FramedSocketTest, WaitingForAFrameEndsWithItOrAtTheDeadline) {
  auto pair = FramedSocket::pair();
  ASSERT_TRUE(pair.ok());
  FramedSocket a(std::move(pair->first)), b(std::move(pair->second));
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(b.waitReadable(start + std::chrono::milliseconds(30)));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(30));
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(a.send("awaited").ok());
  });
  EXPECT_TRUE(b.waitReadable(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  sender.join();
  EXPECT_EQ(nextFrame(b), "awaited");
}

TEST(FramedSocketTest, WaitingForAHangUpSleepsThroughFrames) {
  auto pair = FramedSocket::pair();
  ASSERT_TRUE(pair.ok());
  auto a = std::make_unique<FramedSocket>(std::move(pair->first));
  FramedSocket b(std::move(pair->second));
  std::atomic<bool> woke{false};
  std::thread watcher([&] {
    b.waitHangUp();
    woke = true;
  });
  ASSERT_TRUE(a->send("not a hang-up").ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(woke) << "a frame woke the wait for a hang-up";
  a.reset(); // the peer closes its end
  watcher.join();
  EXPECT_TRUE(woke);
  // The frame sent before is still there to read.
  EXPECT_EQ(nextFrame(b), "not a hang-up");
}

TEST(FramedSocketTest, ASendThePeerTakesNoneOfStopsAtItsDeadlineAndKeepsTheLink) {
  auto pair = FramedSocket::pair();
  ASSERT_TRUE(pair.ok());
  FramedSocket a(std::move(pair->first)), b(std::move(pair->second));
  // Small frames until the socket takes no more (each goes whole or not).
  auto soon = [] {
    return std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  };
  int sent = 0;
  absl::Status full;
  while ((full = a.send("f", {}, soon())).ok() && sent < 1'000'000)
    ++sent;
  ASSERT_TRUE(absl::IsDeadlineExceeded(full)) << full;
  EXPECT_NE(full.message().find("took none"), std::string::npos) << full;
  // Nothing of it went: every frame before it is there, and the link works.
  for (int i = 0; i < sent; ++i)
    ASSERT_EQ(nextFrame(b), "f") << i;
  ASSERT_TRUE(a.send("after", {}, soon()).ok());
  EXPECT_EQ(nextFrame(b), "after");
}

TEST(FramedSocketTest, AFrameThePeerTookPartOfByTheDeadlineIsFinishedInTheBackground) {
  auto pair = FramedSocket::pair();
  ASSERT_TRUE(pair.ok());
  FramedSocket a(std::move(pair->first)), b(std::move(pair->second));
  UniqueFd file = memfdWith("with the first byte");
  // Far more than the socket holds, and nobody reads yet.
  std::string big(4 << 20, 'x');
  big[(3 << 20) + 7] = 'y';
  auto start = std::chrono::steady_clock::now();
  absl::Status cut = a.send(big, {file.get()}, start + std::chrono::milliseconds(100));
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(cut.ok()) << cut;
  EXPECT_GE(took, std::chrono::milliseconds(100));
  EXPECT_LT(took, std::chrono::seconds(5));
  // The next frame waits for it, as for any frame, until its own deadline.
  absl::Status next = a.send("next", {}, std::chrono::steady_clock::now() +
                                             std::chrono::milliseconds(50));
  EXPECT_TRUE(absl::IsDeadlineExceeded(next)) << next;
  // The peer reading on gets the frame whole, its file once, and the link
  // goes on.
  std::string bytes;
  std::vector<UniqueFd> files;
  ASSERT_TRUE(b.receive(bytes, files).ok());
  EXPECT_EQ(bytes, big);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(contents(files[0].get()), "with the first byte");
  ASSERT_TRUE(a.send("after", {}, std::chrono::steady_clock::now() +
                                      std::chrono::seconds(10))
                  .ok());
  EXPECT_EQ(nextFrame(b), "after");
}

TEST(FramedSocketTest, AFrameStillGoingWhenTheSocketIsDestroyedDoesNotHoldItUp) {
  auto pair = FramedSocket::pair();
  ASSERT_TRUE(pair.ok());
  FramedSocket b(std::move(pair->second));
  {
    FramedSocket a(std::move(pair->first));
    EXPECT_TRUE(a.send(std::string(4 << 20, 'z'), {},
                       std::chrono::steady_clock::now() +
                           std::chrono::milliseconds(20))
                    .ok());
  } // its background send is still blocked: shut down and joined
  std::string bytes;
  std::vector<UniqueFd> files;
  EXPECT_FALSE(b.receive(bytes, files).ok());
}

TEST(FramedSocketTest, ASenderQueuedBehindAStuckFrameStopsAtItsDeadline) {
  auto pair = FramedSocket::pair();
  ASSERT_TRUE(pair.ok());
  FramedSocket a(std::move(pair->first)), b(std::move(pair->second));
  std::string big(4 << 20, 'b');
  std::atomic<bool> bigSent{false};
  std::thread first([&] {
    EXPECT_TRUE(a.send(big).ok()); // no deadline: waits for the reader
    bigSent = true;
  });
  // Bytes arrived: the first sender holds the link and cannot finish.
  bool arrived = b.waitReadable(std::chrono::steady_clock::now() +
                                std::chrono::seconds(10));
  EXPECT_TRUE(arrived);
  absl::Status queued =
      a.send("queued", {},
             std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
  EXPECT_TRUE(absl::IsDeadlineExceeded(queued)) << queued;
  EXPECT_NE(queued.message().find("another frame"), std::string::npos) << queued;
  EXPECT_FALSE(bigSent);
  // The first frame is whole once read, and the link goes on.
  EXPECT_EQ(nextFrame(b), big);
  first.join();
  ASSERT_TRUE(a.send("next").ok());
  EXPECT_EQ(nextFrame(b), "next");
}

TEST(FramedSocketTest, GarbageIsDataLossAndLimitsAreInvalidArgument) {
  auto pair = FramedSocket::pair();
  ASSERT_TRUE(pair.ok());
  int raw = pair->first.get();
  FramedSocket a(std::move(pair->first)), b(std::move(pair->second));
  const char garbage[16] = "not a header!!!";
  ASSERT_EQ(::send(raw, garbage, sizeof garbage, 0), 16);
  std::string bytes;
  std::vector<UniqueFd> files;
  EXPECT_TRUE(absl::IsDataLoss(b.receive(bytes, files)));
  std::vector<int> tooMany(FramedSocket::kMaxFiles + 1, 0);
  EXPECT_TRUE(absl::IsInvalidArgument(a.send("x", tooMany)));
}

TEST(FramedSocketTest, AnUntrustedPeerIsHeldToItsLimits) {
  std::string bytes;
  std::vector<UniqueFd> files;
  for (bool withFile : {true, false}) {
    auto pair = FramedSocket::pair();
    ASSERT_TRUE(pair.ok());
    FramedSocket a(std::move(pair->first)), b(std::move(pair->second));
    b.limitFrames(4096, 0);
    if (withFile) {
      // Files where none are allowed: closed unread, the frame refused.
      UniqueFd file(::memfd_create("t", MFD_CLOEXEC));
      ASSERT_TRUE(a.send("hello", {file.get()}).ok());
    } else {
      // A frame over the size limit: refused from its header.
      ASSERT_TRUE(a.send(std::string(5000, 'x')).ok());
    }
    EXPECT_TRUE(absl::IsDataLoss(b.receive(bytes, files)));
    EXPECT_TRUE(files.empty());
  }
}

TEST(FramedSocketTest, AFrameThatDoesNotArriveInTimeIsDeadlineExceeded) {
  auto pair = FramedSocket::pair();
  ASSERT_TRUE(pair.ok());
  int raw = pair->first.get();
  FramedSocket b(std::move(pair->second));
  // Half a header, then nothing: a slow peer does not hold the reader.
  const char part[4] = {'K', 'N', 'L', 'K'};
  ASSERT_EQ(::send(raw, part, sizeof part, 0), 4);
  b.setReceiveDeadline(std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(100));
  auto start = std::chrono::steady_clock::now();
  std::string bytes;
  std::vector<UniqueFd> files;
  EXPECT_TRUE(absl::IsDeadlineExceeded(b.receive(bytes, files)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  UniqueFd keep(std::move(pair->first));
}

class LocalAgentLinkTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto opened = ContentStore::open(dir.path() / "cas");
    ASSERT_TRUE(opened.ok()) << opened.status();
    store = std::move(*opened);
    auto pair = FramedSocket::pair();
    ASSERT_TRUE(pair.ok());
    agentEnd = std::make_unique<FramedSocket>(std::move(pair->second));
    link = std::make_shared<LocalAgentLink>(
        "local-cpu", std::move(pair->first),
        [this](const v1::Digest &d) { return store->openBlob(d); });
  }

  /// A connection whose results the link delivers.
  std::shared_ptr<AgentConnection> boundConnection() {
    auto connection = std::make_shared<AgentConnection>(
        "local-cpu", std::make_shared<WeakAgentLink>(link));
    link->bind(connection);
    return connection;
  }

  /// Dispatches a task, answers it as the agent would with `reply` (one
  /// file, for output `fileOutput`), and returns what the caller gets.
  TaskOutcome answeredWith(worker::LocalResult reply, UniqueFd file) {
    auto connection = boundConnection();
    v1::Task task;
    task.set_task_id("one-file");
    auto future = connection->dispatch(task, record);
    EXPECT_TRUE(future.ok()) << future.status();
    std::string frame;
    std::vector<UniqueFd> files;
    EXPECT_TRUE(agentEnd->receive(frame, files).ok());
    reply.mutable_result()->set_task_id("one-file");
    EXPECT_TRUE(agentEnd->send(reply.SerializeAsString(), {file.get()}).ok());
    if (connection->await(*future, inTenSeconds()) !=
        std::future_status::ready)
      return absl::DeadlineExceededError("no result within 10 s");
    return future->get();
  }

  static std::chrono::steady_clock::time_point inTenSeconds() {
    return std::chrono::steady_clock::now() + std::chrono::seconds(10);
  }

  /// Dispatches a task of each id on `connection`; their futures.
  std::vector<std::future<TaskOutcome>>
  dispatched(AgentConnection &connection, std::vector<std::string> ids) {
    std::vector<std::future<TaskOutcome>> futures;
    for (const std::string &id : ids) {
      v1::Task task;
      task.set_task_id(id);
      auto future = connection.dispatch(task, record);
      EXPECT_TRUE(future.ok()) << future.status();
      if (future.ok())
        futures.push_back(*std::move(future));
    }
    return futures;
  }

  /// Answers task `id` from the agent's end, with `data` as its one output.
  void answer(const std::string &id, const std::string &data) {
    worker::LocalResult reply;
    reply.mutable_result()->set_task_id(id);
    reply.mutable_result()->add_outputs()->set_data(data);
    EXPECT_TRUE(agentEnd->send(reply.SerializeAsString()).ok());
  }

  /// Expects `future`'s task answered with `data` as its first output.
  static void expectAnsweredWith(std::future<TaskOutcome> &future,
                                 const std::string &data) {
    TaskOutcome outcome = future.get();
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(outcome->result.outputs(0).data(), data);
  }

  /// The next frame the agent's end receives, parsed, and its files.
  worker::LocalTask receivedTask(std::vector<UniqueFd> &files) {
    std::string frame;
    EXPECT_TRUE(agentEnd->receive(frame, files).ok());
    worker::LocalTask local;
    EXPECT_TRUE(local.ParseFromString(frame));
    return local;
  }

  /// Task `id` with `count` u8 inputs, each in a memfd holding `bytes`.
  static std::pair<v1::Task, TensorFiles>
  taskWithFileInputs(const std::string &id, size_t count,
                     const std::string &bytes) {
    v1::Task task;
    task.set_task_id(id);
    TensorFiles given;
    for (size_t i = 0; i < count; ++i) {
      task.add_inputs()->mutable_type()->set_dtype(v1::DTYPE_U8);
      given.emplace_back(static_cast<int>(i), memfdWith(bytes));
    }
    return {std::move(task), std::move(given)};
  }

  /// An executable's record as kilnd shares it among its tasks.
  static TaskRecord makeRecord() {
    auto executable = std::make_shared<v1::ExecutableRecord>();
    v1::ExecutableManifest &manifest = *executable->mutable_manifest();
    manifest.set_entry_symbol("kiln_main");
    manifest.set_format("elf-shared-object");
    manifest.add_inputs()->set_name("x");
    *executable->mutable_artifact() = digestOf("artifact");
    return TaskRecord(std::move(executable), "kilnd's signature");
  }

  testing::TempDir dir;
  std::unique_ptr<ContentStore> store;
  std::unique_ptr<FramedSocket> agentEnd;
  std::shared_ptr<LocalAgentLink> link;
  TaskRecord record = makeRecord();
};

TEST_F(LocalAgentLinkTest, TasksCarryBlobFilesAndOutputsComeBackAsFiles) {
  std::string inputBytes(1 << 20, 'i');
  absl::StatusOr<v1::Digest> input = store->put(inputBytes);
  ASSERT_TRUE(input.ok());
  auto connection = boundConnection();

  v1::Task task;
  task.set_task_id("t1");
  v1::Tensor *inline_ = task.add_inputs();
  inline_->set_data("inline");
  *task.add_inputs()->mutable_blob() = *input;
  auto future = connection->dispatch(task, record);
  ASSERT_TRUE(future.ok()) << future.status();

  // The agent's side: one frame, the blob input's file with it.
  std::vector<UniqueFd> files;
  worker::LocalTask local = receivedTask(files);
  // The task as sent with the shared signature; the shared record beside
  // it, as bytes.
  v1::Task expected = task;
  expected.set_signature("kilnd's signature");
  EXPECT_EQ(local.task().SerializeAsString(), expected.SerializeAsString());
  EXPECT_FALSE(local.task().has_record());
  v1::ExecutableRecord sent;
  ASSERT_TRUE(sent.ParseFromString(local.record()));
  EXPECT_EQ(sent.SerializeAsString(), record.record().SerializeAsString());
  EXPECT_EQ(sent.manifest().entry_symbol(), "kiln_main");
  EXPECT_EQ(sent.artifact().hash(), digestOf("artifact").hash());
  EXPECT_EQ(local.task().inputs(0).data(), "inline");
  ASSERT_EQ(local.file_inputs_size(), 1);
  EXPECT_EQ(local.file_inputs(0), 1u);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(contents(files[0].get()), inputBytes);

  // Its answer: output 0 inline, output 1 in a memfd.
  std::string outputBytes(3 << 20, 'o');
  UniqueFd output = memfdWith(outputBytes);
  worker::LocalResult reply;
  reply.mutable_result()->set_task_id("t1");
  reply.mutable_result()->add_outputs()->set_data("small");
  v1::Tensor *large = reply.mutable_result()->add_outputs();
  large->mutable_type()->set_dtype(v1::DTYPE_U8);
  large->mutable_type()->add_shape(3 << 20);
  reply.add_file_outputs(1);
  ASSERT_TRUE(agentEnd->send(reply.SerializeAsString(), {output.get()}).ok());

  // The caller gets the file itself (ExecutorService stores it or passes it
  // on to a local client).
  ASSERT_EQ(connection->await(*future, inTenSeconds()),
            std::future_status::ready);
  TaskOutcome outcome = future->get();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  ASSERT_EQ(outcome->result.code(), 0) << outcome->result.message();
  EXPECT_EQ(outcome->result.outputs(0).data(), "small");
  EXPECT_EQ(outcome->result.outputs(1).payload_case(),
            v1::Tensor::PAYLOAD_NOT_SET);
  ASSERT_EQ(outcome->outputFiles.size(), 1u);
  EXPECT_EQ(outcome->outputFiles[0].first, 1);
  EXPECT_EQ(contents(outcome->outputFiles[0].second.get()), outputBytes);
}

TEST_F(LocalAgentLinkTest, ClientFilesGoWithTheTaskInInputOrder) {
  // Input 0 is a blob (the store's file goes), input 1 a co-located
  // client's memfd (passed on as it came), input 2 inline.
  std::string blobBytes(4096, 'b');
  absl::StatusOr<v1::Digest> blob = store->put(blobBytes);
  ASSERT_TRUE(blob.ok());
  auto connection = boundConnection();
  v1::Task task;
  task.set_task_id("t2");
  *task.add_inputs()->mutable_blob() = *blob;
  task.add_inputs()->mutable_type()->set_dtype(v1::DTYPE_U8);
  task.add_inputs()->set_data("inline");
  std::string clientBytes(8192, 'c');
  TensorFiles given;
  given.emplace_back(1, memfdWith(clientBytes));
  auto future = connection->dispatch(task, record, given);
  ASSERT_TRUE(future.ok()) << future.status();

  std::vector<UniqueFd> files;
  worker::LocalTask local = receivedTask(files);
  ASSERT_EQ(local.file_inputs_size(), 2);
  EXPECT_EQ(local.file_inputs(0), 0u);
  EXPECT_EQ(local.file_inputs(1), 1u);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(contents(files[0].get()), blobBytes);
  EXPECT_EQ(contents(files[1].get()), clientBytes);
  connection->abandon("t2");
}

TEST_F(LocalAgentLinkTest, TheTaskSaysWhetherTheCallerMapsOutputFiles) {
  // A client on kilnd's local socket maps output files itself; for any
  // other caller kilnd would store them as blobs.
  auto connection = boundConnection();
  for (bool callerMaps : {true, false}) {
    v1::Task task;
    task.set_task_id(callerMaps ? "mapped" : "stored");
    auto future =
        connection->dispatch(task, record, {}, LinkExtras{callerMaps});
    ASSERT_TRUE(future.ok()) << future.status();
    std::vector<UniqueFd> files;
    worker::LocalTask local = receivedTask(files);
    EXPECT_EQ(local.task().task_id(), task.task_id());
    EXPECT_EQ(local.caller_maps_outputs(), callerMaps);
    connection->abandon(task.task_id());
  }
}

TEST_F(LocalAgentLinkTest, ADirectChannelGoesLastAndTheAnswerSaysIfItOpened) {
  // The socket kilnd hands the agent for a client's direct channel travels
  // after the task's input files, and the agent's answer says whether it
  // serves the channel.
  auto connection = boundConnection();
  auto [task, given] = taskWithFileInputs("direct", 1, "input");
  auto channel = FramedSocket::pair();
  ASSERT_TRUE(channel.ok());
  LinkExtras extras;
  extras.directChannel = channel->first.get();
  auto future = connection->dispatch(task, record, given, extras);
  ASSERT_TRUE(future.ok()) << future.status();
  std::vector<UniqueFd> files;
  worker::LocalTask local = receivedTask(files);
  EXPECT_TRUE(local.direct_channel());
  ASSERT_EQ(local.file_inputs_size(), 1);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(contents(files[0].get()), "input");
  // The last file is the pair's other end: bytes written there arrive here.
  FramedSocket agentChannel(std::move(files[1]));
  ASSERT_TRUE(agentChannel.send("through").ok());
  FramedSocket clientChannel(std::move(channel->second));
  std::string bytes;
  std::vector<UniqueFd> none;
  ASSERT_TRUE(clientChannel.receive(bytes, none).ok());
  EXPECT_EQ(bytes, "through");

  worker::LocalResult reply;
  reply.mutable_result()->set_task_id("direct");
  reply.set_direct_channel_open(true);
  ASSERT_TRUE(agentEnd->send(reply.SerializeAsString()).ok());
  ASSERT_EQ(connection->await(*future, inTenSeconds()),
            std::future_status::ready);
  TaskOutcome outcome = future->get();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->directChannelOpen);
}

TEST_F(LocalAgentLinkTest, ATaskWhoseInputFilesFillTheFrameGoesWithoutItsChannel) {
  auto connection = boundConnection();
  auto [task, given] =
      taskWithFileInputs("full", FramedSocket::kMaxFiles, "x");
  auto channel = FramedSocket::pair();
  ASSERT_TRUE(channel.ok());
  LinkExtras extras;
  extras.directChannel = channel->first.get();
  auto future = connection->dispatch(task, record, given, extras);
  ASSERT_TRUE(future.ok()) << future.status();
  std::vector<UniqueFd> files;
  worker::LocalTask local = receivedTask(files);
  EXPECT_FALSE(local.direct_channel());
  EXPECT_EQ(files.size(), FramedSocket::kMaxFiles);
  connection->abandon("full");
}

TEST_F(LocalAgentLinkTest, AFileForAnOutputWithAPayloadFailsTheTask) {
  worker::LocalResult reply;
  reply.mutable_result()->add_outputs()->set_data("inline too");
  reply.add_file_outputs(0);
  TaskOutcome outcome = answeredWith(reply, memfdWith("bytes"));
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->result.code(),
            static_cast<int>(absl::StatusCode::kInternal));
  EXPECT_NE(outcome->result.message().find("passed a file for output 0"),
            std::string::npos)
      << outcome->result.message();
  EXPECT_TRUE(outcome->outputFiles.empty());
  EXPECT_EQ(outcome->result.outputs_size(), 0);
}

TEST_F(LocalAgentLinkTest, AFileForAnInputTheTaskLacksIsNotSent) {
  EXPECT_TRUE(link->passesFiles());
  TensorFiles given;
  given.emplace_back(5, memfdWith("x"));
  v1::Task task;
  task.set_task_id("t3");
  task.add_inputs();
  // A file for an input the task does not have.
  absl::Status sent = link->send(task, record, given, LinkExtras{},
                                 std::chrono::steady_clock::time_point::max());
  EXPECT_TRUE(absl::IsUnavailable(sent)) << sent;
  EXPECT_NE(sent.message().find("input 5"), std::string::npos) << sent;
}

TEST_F(LocalAgentLinkTest, AnAgentThatDoesNotReadCostsCallsTheirDeadlinesNotTheLink) {
  // An agent reading nothing (stuck, stopped, or every thread busy): a
  // task of 4 MiB inline fills the socket by its caller's deadline. It is
  // sent on in the background (the agent may yet read and run it), the
  // next task finds the link busy at its own deadline, and the link and
  // the task in flight before them stay.
  auto connection = boundConnection();
  auto waiting = dispatched(*connection, {"small"});
  ASSERT_EQ(waiting.size(), 1u);
  v1::Task big;
  big.set_task_id("big");
  big.add_inputs()->set_data(std::string(4 << 20, 'd'));
  auto start = std::chrono::steady_clock::now();
  auto sent = connection->dispatch(big, record, {}, {},
                                   start + std::chrono::milliseconds(200));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_EQ(connection->await(*sent, start + std::chrono::milliseconds(200)),
            std::future_status::timeout);
  connection->abandon("big");
  v1::Task next;
  next.set_task_id("next");
  auto refused = connection->dispatch(next, record, {}, {},
                                      std::chrono::steady_clock::now() +
                                          std::chrono::milliseconds(100));
  ASSERT_TRUE(absl::IsDeadlineExceeded(refused.status())) << refused.status();
  EXPECT_NE(refused.status().message().find("did not take task next"),
            std::string::npos)
      << refused.status();
  // The agent reads on: both frames whole, and the first task's answer
  // reaches its caller.
  std::vector<UniqueFd> files;
  EXPECT_EQ(receivedTask(files).task().task_id(), "small");
  worker::LocalTask second = receivedTask(files);
  EXPECT_EQ(second.task().task_id(), "big");
  ASSERT_EQ(second.task().inputs_size(), 1);
  EXPECT_EQ(second.task().inputs(0).data().size(), size_t{4} << 20);
  worker::LocalResult reply;
  reply.mutable_result()->set_task_id("small");
  ASSERT_TRUE(agentEnd->send(reply.SerializeAsString()).ok());
  ASSERT_EQ(connection->await(waiting[0], inTenSeconds()),
            std::future_status::ready);
  EXPECT_TRUE(waiting[0].get().ok());
}

TEST_F(LocalAgentLinkTest, PutFileRefusesAWrongSizeOrAnUnsealedFile) {
  // What ExecutorService stores an output file with, for gRPC callers.
  UniqueFd small = memfdWith("only 13 bytes");
  absl::StatusOr<v1::Digest> wrongSize =
      store->putFile(small.get(), 4096, Durability::kInTransit);
  EXPECT_TRUE(absl::IsInvalidArgument(wrongSize.status())) << wrongSize.status();
  EXPECT_NE(wrongSize.status().message().find("holds 13"), std::string::npos);
  // Its sender could change the bytes after kilnd hashed them.
  std::string bytes(4096, 'u');
  UniqueFd unsealed = memfdWith(bytes, /*sealed=*/false);
  absl::StatusOr<v1::Digest> refused =
      store->putFile(unsealed.get(), 4096, Durability::kInTransit);
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_NE(refused.status().message().find("sealed"), std::string::npos);
  EXPECT_FALSE(store->contains(digestOf(bytes)));
}

TEST_F(LocalAgentLinkTest, AnEndedLinkFailsTheTasksInFlight) {
  auto connection = boundConnection();
  v1::Task task;
  task.set_task_id("t5");
  auto future = connection->dispatch(task, record);
  ASSERT_TRUE(future.ok());
  agentEnd.reset(); // the agent died with the task unanswered
  ASSERT_EQ(future->wait_for(std::chrono::seconds(10)),
            std::future_status::ready)
      << "failed at once, not at its deadline";
  EXPECT_TRUE(absl::IsUnavailable(future->get().status()));
}

TEST_F(LocalAgentLinkTest, AnsweredOutOfOrderEachCallerGetsItsOwn) {
  // Eight callers await at once; the agent answers in reverse order, one
  // answer at a time. Whoever reads hands each other caller its answer;
  // a caller leaving with its own hands the reading to the watcher, which
  // reads for the rest: all return.
  constexpr int kCallers = 8;
  auto connection = boundConnection();
  std::vector<std::string> ids;
  for (int i = 0; i < kCallers; ++i)
    ids.push_back(absl::StrCat("task-", i));
  std::vector<std::future<TaskOutcome>> futures = dispatched(*connection, ids);
  ASSERT_EQ(futures.size(), ids.size());
  std::vector<std::future_status> waited(kCallers);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i)
    callers.emplace_back([&, i] {
      waited[i] = connection->await(futures[i], inTenSeconds());
    });
  std::vector<UniqueFd> files;
  for (int i = 0; i < kCallers; ++i)
    receivedTask(files);
  for (int i = kCallers - 1; i >= 0; --i) {
    answer(ids[i], absl::StrCat(i));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (std::thread &caller : callers)
    caller.join();
  for (int i = 0; i < kCallers; ++i) {
    ASSERT_EQ(waited[i], std::future_status::ready) << ids[i];
    expectAnsweredWith(futures[i], absl::StrCat(i));
  }
}

TEST_F(LocalAgentLinkTest, AReaderLeavingWithItsAnswerHandsTheReadingToTheWatcher) {
  // A reads the link; B, awaiting while A reads, waits on its promise.
  // A's answer comes first and A leaves: B's, which comes after, is read
  // by the watcher A woke, not by B (B never reads while it waits).
  auto connection = boundConnection();
  std::vector<std::future<TaskOutcome>> futures = dispatched(*connection, {"a", "b"});
  ASSERT_EQ(futures.size(), 2u);
  std::future_status waitedA{}, waitedB{};
  std::thread a([&] { waitedA = connection->await(futures[0], inTenSeconds()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50)); // A reads
  std::thread b([&] {
    waitedB = connection->await(futures[1], std::chrono::steady_clock::now() +
                                                std::chrono::seconds(3));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50)); // B waits
  std::vector<UniqueFd> files;
  receivedTask(files);
  receivedTask(files);
  answer("a", "first");
  a.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(20)); // A is gone
  answer("b", "second");
  b.join();
  ASSERT_EQ(waitedA, std::future_status::ready);
  ASSERT_EQ(waitedB, std::future_status::ready) << "nobody read B's answer";
  expectAnsweredWith(futures[1], "second");
}

TEST_F(LocalAgentLinkTest, AWaitEndsAtItsDeadlineAndTheLateAnswerIsSkippedLater) {
  auto connection = boundConnection();
  std::vector<std::future<TaskOutcome>> late = dispatched(*connection, {"late"});
  ASSERT_EQ(late.size(), 1u);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(connection->await(late[0], start + std::chrono::milliseconds(50)),
            std::future_status::timeout);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
  connection->abandon("late");
  // The abandoned task's answer is read (by the watcher, or by the next
  // caller on its way to its own) and dropped.
  std::vector<std::future<TaskOutcome>> next = dispatched(*connection, {"next"});
  ASSERT_EQ(next.size(), 1u);
  std::vector<UniqueFd> files;
  receivedTask(files);
  receivedTask(files);
  answer("late", "stale");
  answer("next", "fresh");
  ASSERT_EQ(connection->await(next[0], inTenSeconds()),
            std::future_status::ready);
  expectAnsweredWith(next[0], "fresh");
}

TEST_F(LocalAgentLinkTest, LateAnswersAreReadWithNobodyAwaitingThemSoTheAgentNeverBlocks) {
  // Four callers' deadlines pass; then the agent answers them with 1 MiB
  // each, far past the socket's buffer. Nobody awaits: the link still
  // reads them (they are owed), so the agent's sends finish, and a large
  // task after them goes through and is answered.
  auto connection = boundConnection();
  std::vector<std::string> late = {"late-0", "late-1", "late-2", "late-3"};
  std::vector<std::future<TaskOutcome>> futures = dispatched(*connection, late);
  ASSERT_EQ(futures.size(), late.size());
  for (size_t i = 0; i < late.size(); ++i) {
    EXPECT_EQ(connection->await(futures[i], std::chrono::steady_clock::now() +
                                                std::chrono::milliseconds(20)),
              std::future_status::timeout);
    connection->abandon(late[i]);
  }
  std::vector<UniqueFd> files;
  for (size_t i = 0; i < late.size(); ++i)
    receivedTask(files);
  std::string big(1 << 20, 'a');
  auto answering = std::async(std::launch::async, [&] {
    for (const std::string &id : late)
      answer(id, big);
  });
  if (answering.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    agentEnd->shutdown(); // lets the blocked sender (and the test) end
    FAIL() << "the agent blocked sending answers nobody read";
  }
  v1::Task next;
  next.set_task_id("next");
  next.add_inputs()->set_data(big);
  // The agent takes the frame while kilnd sends it (past the buffer too).
  auto taking = std::async(std::launch::async, [&] {
    std::vector<UniqueFd> taken;
    worker::LocalTask sent = receivedTask(taken);
    EXPECT_EQ(sent.task().inputs(0).data().size(), big.size());
    answer("next", "fresh");
  });
  auto nextFuture = connection->dispatch(next, record);
  if (!nextFuture.ok()) {
    agentEnd->shutdown(); // ends the agent's receive
    FAIL() << nextFuture.status();
  }
  ASSERT_EQ(connection->await(*nextFuture, inTenSeconds()), std::future_status::ready);
  taking.get();
  expectAnsweredWith(*nextFuture, "fresh");
}

TEST_F(LocalAgentLinkTest, ACallerReadingSeesItsTaskFailedWithoutAFrame) {
  // The connection closes (the agent registered again) while the link
  // stays: the caller reading it returns within a slice, not at its
  // deadline.
  auto connection = boundConnection();
  std::vector<std::future<TaskOutcome>> futures = dispatched(*connection, {"closed"});
  ASSERT_EQ(futures.size(), 1u);
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    connection->close(absl::UnavailableError("registered again"));
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(connection->await(futures[0], start + std::chrono::seconds(60)),
            std::future_status::ready);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  closer.join();
  EXPECT_TRUE(absl::IsUnavailable(futures[0].get().status()));
}

TEST_F(LocalAgentLinkTest, WhatAnAgentAnsweredBeforeItWentIsStillDelivered) {
  // Nobody awaits: the watcher reads the answer the agent sent before it
  // hung up, then fails the task it left unanswered.
  auto connection = boundConnection();
  std::vector<std::future<TaskOutcome>> futures =
      dispatched(*connection, {"answered", "unanswered"});
  ASSERT_EQ(futures.size(), 2u);
  std::vector<UniqueFd> files;
  receivedTask(files);
  receivedTask(files);
  answer("answered", "done");
  agentEnd.reset();
  for (std::future<TaskOutcome> &future : futures)
    ASSERT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  TaskOutcome answered = futures[0].get();
  ASSERT_TRUE(answered.ok()) << answered.status();
  EXPECT_EQ(answered->result.outputs(0).data(), "done");
  EXPECT_TRUE(absl::IsUnavailable(futures[1].get().status()));
}

TEST_F(LocalAgentLinkTest, AGoneAgentFailsTheSend) {
  auto connection = std::make_shared<AgentConnection>(
        "local-cpu", std::make_shared<WeakAgentLink>(link));
  agentEnd.reset();
  v1::Task task;
  task.set_task_id("t3");
  EXPECT_TRUE(absl::IsUnavailable(connection->dispatch(task, record).status()));
}

TEST(ContentStoreFilesTest, OpenBlobChecksPresenceAndSize) {
  testing::TempDir dir;
  auto store = ContentStore::open(dir.path() / "cas");
  ASSERT_TRUE(store.ok());
  absl::StatusOr<v1::Digest> digest = (*store)->put("some bytes");
  ASSERT_TRUE(digest.ok());
  absl::StatusOr<UniqueFd> file = (*store)->openBlob(*digest);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(contents(file->get()), "some bytes");
  v1::Digest wrongSize = *digest;
  wrongSize.set_size_bytes(3);
  EXPECT_TRUE(absl::IsNotFound((*store)->openBlob(wrongSize).status()));
  EXPECT_TRUE(
      absl::IsNotFound((*store)->openBlob(digestOf("absent")).status()));
}

} // namespace
} // namespace kiln::server
