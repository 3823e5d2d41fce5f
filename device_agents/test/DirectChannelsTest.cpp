//===- DirectChannelsTest.cpp - a client's calls on the bound task --------===//
//
// This file tests DirectChannels with the cpu backend: a call carries only
// its inputs and runs as the task the channel was bound to, the channel
// refuses a call that names more, the agent's limit of channels holds (and
// frees up as clients close theirs), destroying the set ends every
// channel without waiting for its client, and a channel's exchange buffer
// carries a call's tensors (and refuses slices that do not fit).
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/agent/DirectChannels.h"
#include "kiln/agent/cpu/CpuBackend.h"
#include "kiln/common/Digest.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/mman.h>

namespace kiln::agent {
namespace {

using test::TempDir;
constexpr int kElements = 64;

class DirectChannelsTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto opened = BlobCache::open(dir.path() / "cache");
    ASSERT_TRUE(opened.ok()) << opened.status();
    cache = std::move(*opened);
    runner = std::make_unique<TaskRunner>(backend, *cache, resident, blobs);
    runner->setTaskVerifier(test::taskVerifier());
    auto path = test::compileSharedObject(dir.path(), "axpy",
                                          test::axpyKernelSource(kElements));
    ASSERT_TRUE(path.ok()) << path.status();
    std::string artifactBytes = test::readFileBytes(*path);
    blobs.add(artifactBytes);
    binding.set_task_id("opening-call");
    binding.set_device_id("local-cpu/0");
    *binding.mutable_record() = test::axpyRecord(kElements, artifactBytes);
    *binding.mutable_executable() =
        digestOf(binding.record().SerializeAsString());
    std::vector<float> a(kElements);
    for (int i = 0; i < kElements; ++i)
      a[i] = static_cast<float>(i);
    *binding.add_parameters() = blobs.add(test::floatBytes(a));
    test::signTask(binding);
    record = std::make_shared<const v1::ExecutableRecord>(binding.record());
  }

  /// A channel of `channels` bound to the axpy task; the client's end.
  std::unique_ptr<FramedSocket> openChannel(DirectChannels &channels,
                                            bool *opened = nullptr) {
    auto pair = FramedSocket::pair();
    EXPECT_TRUE(pair.ok());
    bool ok = channels.open(std::move(pair->first), binding, record);
    if (opened)
      *opened = ok;
    else
      EXPECT_TRUE(ok);
    return std::make_unique<FramedSocket>(std::move(pair->second));
  }

  /// A call of x = [0, -1, -2, ...] with only its inputs.
  static v1::LocalClientFrame call(const v1::Task &binding) {
    v1::LocalClientFrame frame;
    v1::Tensor &input = *frame.mutable_execute()->mutable_request()->add_inputs();
    *input.mutable_type() = binding.record().manifest().inputs(0).type();
    std::vector<float> x(kElements);
    for (int i = 0; i < kElements; ++i)
      x[i] = -static_cast<float>(i);
    input.set_data(test::floatBytes(x));
    frame.mutable_execute()->set_request_id("direct-test");
    return frame;
  }

  /// Sends `frame` (with `sent` files) and reads the reply (its files in
  /// `received`, when given).
  static v1::LocalReply roundTrip(FramedSocket &client,
                                  const v1::LocalClientFrame &frame,
                                  const std::vector<int> &sent = {},
                                  std::vector<UniqueFd> *received = nullptr) {
    EXPECT_TRUE(client.send(frame.SerializeAsString(), sent).ok());
    std::string bytes;
    std::vector<UniqueFd> files;
    EXPECT_TRUE(client.receive(bytes, files).ok());
    v1::LocalReply reply;
    EXPECT_TRUE(reply.ParseFromString(bytes));
    if (received)
      *received = std::move(files);
    return reply;
  }

  /// Asks for an exchange buffer of `size` bytes; the reply, and the
  /// buffer's file when one came.
  static v1::LocalReply askExchange(FramedSocket &client, uint64_t size,
                                    UniqueFd *file) {
    v1::LocalClientFrame frame;
    frame.mutable_exchange()->set_size_bytes(size);
    std::vector<UniqueFd> files;
    v1::LocalReply reply = roundTrip(client, frame, {}, &files);
    if (file && !files.empty())
      *file = std::move(files.front());
    return reply;
  }

  /// call(binding) with its input moved into `exchange` at `offset` (null:
  /// only named there), and the buffer from `outputOffset` on given for
  /// outputs.
  static v1::LocalClientFrame exchangeCall(const v1::Task &binding,
                                           uint8_t *exchange, uint64_t offset,
                                           uint64_t outputOffset,
                                           uint64_t outputBytes) {
    v1::LocalClientFrame frame = call(binding);
    v1::Tensor &input = *frame.mutable_execute()->mutable_request()->mutable_inputs(0);
    if (exchange)
      std::memcpy(exchange + offset, input.data().data(), input.data().size());
    input.clear_data();
    v1::ExchangeSlice &slice = *frame.mutable_execute()->add_exchange_inputs();
    slice.set_index(0);
    slice.set_offset(offset);
    frame.mutable_execute()->set_exchange_output_offset(outputOffset);
    frame.mutable_execute()->set_exchange_output_bytes(outputBytes);
    return frame;
  }

  static void expectAxpy(const std::vector<float> &out) {
    ASSERT_EQ(out.size(), static_cast<size_t>(kElements));
    for (int i = 0; i < kElements; ++i)
      ASSERT_FLOAT_EQ(out[i], static_cast<float>(i) + 2.0f * -static_cast<float>(i))
          << "a + 2x at " << i;
  }

  TempDir dir;
  CpuBackend backend;
  test::MemoryBlobService blobs;
  ResidentSet resident{1 << 30};
  std::unique_ptr<BlobCache> cache;
  std::unique_ptr<TaskRunner> runner;
  v1::Task binding;
  std::shared_ptr<const v1::ExecutableRecord> record;
};

TEST_F(DirectChannelsTest, ACallRunsAsTheBoundTaskWithItsInputs) {
  DirectChannels channels(*runner);
  auto client = openChannel(channels);
  for (int repeat = 0; repeat < 2; ++repeat) {
    v1::LocalReply reply = roundTrip(*client, call(binding));
    ASSERT_EQ(reply.code(), 0) << reply.message();
    const v1::ExecuteResponse &response = reply.response();
    EXPECT_EQ(response.device_id(), "local-cpu/0");
    ASSERT_EQ(response.outputs_size(), 1);
    std::vector<float> out = test::bytesToFloats(response.outputs(0).data());
    ASSERT_EQ(out.size(), static_cast<size_t>(kElements));
    for (int i = 0; i < kElements; ++i)
      ASSERT_FLOAT_EQ(out[i], static_cast<float>(i) + 2.0f * -static_cast<float>(i))
          << "a + 2x at " << i;
    EXPECT_GE(response.timings().total_us(), response.timings().run_us());
  }
  EXPECT_EQ(channels.openCount(), 1u);
}

TEST_F(DirectChannelsTest, ACallNamingAnExecutableIsRefusedAndTheChannelServesOn) {
  DirectChannels channels(*runner);
  auto client = openChannel(channels);
  v1::LocalClientFrame frame = call(binding);
  *frame.mutable_execute()->mutable_request()->mutable_executable() =
      digestOf("someone else's code");
  v1::LocalReply reply = roundTrip(*client, frame);
  EXPECT_EQ(reply.code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(reply.message().find("names only its inputs"), std::string::npos)
      << reply.message();
  EXPECT_EQ(roundTrip(*client, call(binding)).code(), 0);
}

TEST_F(DirectChannelsTest, AnswersSayHowLongTheChannelPollsForTheNextCall) {
  using std::chrono::microseconds;
  for (microseconds window : {microseconds(0), microseconds(200'000)}) {
    DirectChannels channels(*runner, nullptr, DirectChannels::kDefaultLimit,
                            DirectPoll{.window = window, .pollers = 1});
    auto client = openChannel(channels);
    v1::LocalReply first = roundTrip(*client, call(binding));
    ASSERT_EQ(first.code(), 0) << first.message();
    EXPECT_EQ(first.poll_us(), static_cast<uint32_t>(window.count()));
    // A call sent while the channel polls (within 200 ms of the answer),
    // and one sent after its window, when its thread sleeps.
    v1::LocalReply polled = roundTrip(*client, call(binding));
    ASSERT_EQ(polled.code(), 0) << polled.message();
    expectAxpy(test::bytesToFloats(polled.response().outputs(0).data()));
    std::this_thread::sleep_for(window + std::chrono::milliseconds(50));
    v1::LocalReply late = roundTrip(*client, call(binding));
    ASSERT_EQ(late.code(), 0) << late.message();
    expectAxpy(test::bytesToFloats(late.response().outputs(0).data()));
  }
}

TEST(NextPollWindowTest, GrowsAtOnceShrinksByQuartersWithinTheBounds) {
  using std::chrono::microseconds;
  DirectPoll adaptive{.window = microseconds(100), .cap = microseconds(1000),
                      .pollers = 1};
  auto next = [&](int current, int gap) {
    return nextPollWindow(adaptive, microseconds(current), microseconds(gap))
        .count();
  };
  EXPECT_EQ(next(100, 20), 100);   // never below the shortest
  EXPECT_EQ(next(100, 180), 360);  // twice the gap, at once
  EXPECT_EQ(next(100, 700), 1000); // at most the cap
  EXPECT_EQ(next(1000, 100), 750); // a quicker call: a quarter less
  EXPECT_EQ(next(1000, 450), 900); // ... but not below twice its gap
  EXPECT_EQ(next(360, 20), 270);
  EXPECT_EQ(next(120, 20), 100);
  // A client slower than the cap is not polled for beyond the shortest.
  EXPECT_EQ(next(1000, 1001), 100);
  EXPECT_EQ(next(400, 5'000'000), 100);
  // A fixed window (an explicit --direct-poll-us, or no cap) stays.
  DirectPoll fixed{.window = microseconds(250), .pollers = 1};
  for (int gap : {1, 400, 9000})
    EXPECT_EQ(nextPollWindow(fixed, microseconds(250), microseconds(gap)),
              microseconds(250));
}

TEST_F(DirectChannelsTest, AChannelsWindowFollowsItsClientsPace) {
  // The answers say the window the channel polls next: twice the time
  // the client took to call again, within [100 us, 100 ms] here; the
  // shortest again after a pause longer than the cap.
  using namespace std::chrono_literals;
  DirectChannels channels(*runner, nullptr, DirectChannels::kDefaultLimit,
                          DirectPoll{.window = 100us, .cap = 100ms, .pollers = 1});
  auto client = openChannel(channels);
  v1::LocalReply first = roundTrip(*client, call(binding));
  ASSERT_EQ(first.code(), 0) << first.message();
  EXPECT_EQ(first.poll_us(), 100u); // no pace seen yet
  std::this_thread::sleep_for(20ms);
  v1::LocalReply paced = roundTrip(*client, call(binding));
  ASSERT_EQ(paced.code(), 0) << paced.message();
  expectAxpy(test::bytesToFloats(paced.response().outputs(0).data()));
  // About twice the 20 ms sleep, at most the cap. The agent stamps its
  // answer as sent after the write returns, so on a loaded host it can
  // see a few ms less than the client slept (35-38 ms windows were seen
  // with a build running): at least twice half the sleep.
  EXPECT_GE(paced.poll_us(), 20'000u);
  EXPECT_LE(paced.poll_us(), 100'000u);
  std::this_thread::sleep_for(150ms); // past the cap
  v1::LocalReply late = roundTrip(*client, call(binding));
  ASSERT_EQ(late.code(), 0) << late.message();
  EXPECT_EQ(late.poll_us(), 100u);
}

TEST_F(DirectChannelsTest, OnlyCallsThatRanBuyAPollAndPollersAreCapped) {
  // One poller for the set: while the first channel polls (10 s after its
  // answer, unless its client calls), a second channel's answer says it
  // does not poll. A refused call buys no poll either.
  DirectChannels channels(*runner, nullptr, DirectChannels::kDefaultLimit,
                          DirectPoll{.window = std::chrono::seconds(10), .pollers = 1});
  auto first = openChannel(channels);
  auto second = openChannel(channels);
  v1::LocalClientFrame refused = call(binding);
  refused.mutable_execute()->mutable_request()->mutable_executable()->set_hash("x");
  v1::LocalReply bad = roundTrip(*first, refused);
  EXPECT_EQ(bad.code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(bad.poll_us(), 0u);
  v1::LocalReply ran = roundTrip(*first, call(binding));
  ASSERT_EQ(ran.code(), 0) << ran.message();
  EXPECT_EQ(ran.poll_us(), 10'000'000u); // polls now, holding the one turn
  v1::LocalReply other = roundTrip(*second, call(binding));
  ASSERT_EQ(other.code(), 0) << other.message();
  EXPECT_EQ(other.poll_us(), 0u) << "a second channel polled past the cap";
  // The first channel's next call ends its poll and gives the turn back
  // before that call's answer takes it again; the second channel's
  // answer then still finds it taken, so it sleeps at once.
  EXPECT_EQ(roundTrip(*first, call(binding)).poll_us(), 10'000'000u);
  first.reset(); // the poll ends with the hang-up, the turn is free
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  uint32_t freed = 0;
  while (freed == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    freed = roundTrip(*second, call(binding)).poll_us();
  }
  EXPECT_EQ(freed, 10'000'000u) << "the closed channel kept its turn";
}

TEST_F(DirectChannelsTest, TheLimitHoldsAndFreesAsClientsClose) {
  DirectChannels channels(*runner, nullptr, /*limit=*/2);
  auto first = openChannel(channels);
  auto second = openChannel(channels);
  bool opened = true;
  auto third = openChannel(channels, &opened);
  EXPECT_FALSE(opened) << "a third channel past a limit of 2";
  // Refused: its socket was closed, so the client sees the end.
  std::string bytes;
  std::vector<UniqueFd> files;
  EXPECT_TRUE(absl::IsUnavailable(third->receive(bytes, files)));
  first.reset(); // the client closes its channel: the agent's thread ends
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (channels.openCount() > 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(channels.openCount(), 1u);
  auto fourth = openChannel(channels);
  EXPECT_EQ(roundTrip(*fourth, call(binding)).code(), 0);
}

TEST_F(DirectChannelsTest, ACallWaitsForARunSlot) {
  // The slots are the agent's --task-threads, shared with the local link:
  // with none free, a call waits instead of running beside the others.
  std::counting_semaphore<> slots(1);
  DirectChannels channels(*runner, &slots);
  auto client = openChannel(channels);
  slots.acquire(); // a link task runs
  ASSERT_TRUE(client->send(call(binding).SerializeAsString()).ok());
  client->setReceiveDeadline(std::chrono::steady_clock::now() +
                             std::chrono::milliseconds(300));
  std::string bytes;
  std::vector<UniqueFd> files;
  EXPECT_TRUE(absl::IsDeadlineExceeded(client->receive(bytes, files)))
      << "answered while every slot was taken";
  slots.release();
  client->setReceiveDeadline(std::chrono::steady_clock::time_point::max());
  ASSERT_TRUE(client->receive(bytes, files).ok());
  v1::LocalReply reply;
  ASSERT_TRUE(reply.ParseFromString(bytes));
  EXPECT_EQ(reply.code(), 0) << reply.message();
}

TEST_F(DirectChannelsTest, DestroyingTheSetEndsChannelsItsClientsHold) {
  auto channels = std::make_unique<DirectChannels>(*runner);
  auto client = openChannel(*channels);
  ASSERT_EQ(roundTrip(*client, call(binding)).code(), 0);
  channels.reset(); // returns although the client never closes its end
  std::string bytes;
  std::vector<UniqueFd> files;
  EXPECT_TRUE(absl::IsUnavailable(client->receive(bytes, files)));
}

TEST_F(DirectChannelsTest, AnExchangeBufferCarriesACallsTensors) {
  DirectChannels channels(*runner);
  auto client = openChannel(channels);
  constexpr uint64_t kSize = 4096;
  UniqueFd file;
  v1::LocalReply made = askExchange(*client, kSize, &file);
  ASSERT_EQ(made.code(), 0) << made.message();
  EXPECT_EQ(made.exchange_bytes(), kSize);
  ASSERT_TRUE(file.valid());
  // Sealed so that the client can neither resize it under the agent's
  // mapping nor lift the seals; writable by both sides.
  int seals = ::fcntl(file.get(), F_GET_SEALS);
  EXPECT_EQ(seals & (F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL),
            F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
  EXPECT_EQ(seals & F_SEAL_WRITE, 0);
  EXPECT_NE(::ftruncate(file.get(), 0), 0) << "the client shrank the buffer";
  void *mapped = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED,
                        file.get(), 0);
  ASSERT_NE(mapped, MAP_FAILED);
  auto *exchange = static_cast<uint8_t *>(mapped);
  const uint64_t bytes = kElements * sizeof(float);
  for (int repeat = 0; repeat < 2; ++repeat) {
    std::memset(exchange, 0xff, kSize);
    v1::LocalReply reply = roundTrip(
        *client, exchangeCall(binding, exchange, 128, 1000, kSize - 1000));
    ASSERT_EQ(reply.code(), 0) << reply.message();
    ASSERT_EQ(reply.response().outputs_size(), 1);
    EXPECT_EQ(reply.response().outputs(0).payload_case(),
              v1::Tensor::PAYLOAD_NOT_SET);
    ASSERT_EQ(reply.exchange_outputs_size(), 1);
    EXPECT_EQ(reply.exchange_outputs(0).index(), 0u);
    // The first aligned offset of the region.
    EXPECT_EQ(reply.exchange_outputs(0).offset(), 1024u);
    std::vector<float> out(kElements);
    std::memcpy(out.data(), exchange + 1024, bytes);
    expectAxpy(out);
  }
  // A region too small for the output: it comes back inline.
  v1::LocalReply inlined =
      roundTrip(*client, exchangeCall(binding, exchange, 0, 1024, bytes - 1));
  ASSERT_EQ(inlined.code(), 0) << inlined.message();
  EXPECT_EQ(inlined.exchange_outputs_size(), 0);
  expectAxpy(test::bytesToFloats(inlined.response().outputs(0).data()));
  ::munmap(mapped, kSize);
}

TEST_F(DirectChannelsTest, ExchangeSlicesThatDoNotFitAreRefusedAndTheChannelServesOn) {
  DirectChannels channels(*runner);
  auto client = openChannel(channels);
  // Before the channel has a buffer.
  v1::LocalReply none =
      roundTrip(*client, exchangeCall(binding, nullptr, 0, 0, 0));
  EXPECT_EQ(none.code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(none.message().find("has none"), std::string::npos) << none.message();
  // Buffers of no bytes, or past the limit.
  EXPECT_EQ(askExchange(*client, 0, nullptr).code(),
            static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(askExchange(*client, ExchangeBuffer::kMaxBytes + 1, nullptr).code(),
            static_cast<int>(absl::StatusCode::kInvalidArgument));
  UniqueFd file;
  ASSERT_EQ(askExchange(*client, 4096, &file).code(), 0);
  const uint64_t bytes = kElements * sizeof(float);
  struct Case {
    std::string what;
    v1::LocalClientFrame frame;
    std::string says;
  };
  std::vector<Case> cases;
  cases.push_back({"an input past the end",
                   exchangeCall(binding, nullptr, 4096 - bytes + 1, 0, 0),
                   "not inside the channel's exchange buffer"});
  cases.push_back({"an offset that wraps",
                   exchangeCall(binding, nullptr, ~uint64_t{0} - 8, 0, 0),
                   "not inside"});
  cases.push_back({"an output region past the end",
                   exchangeCall(binding, nullptr, 0, 4000, 200),
                   "output region"});
  {
    v1::LocalClientFrame frame = exchangeCall(binding, nullptr, 0, 0, 0);
    frame.mutable_execute()->mutable_exchange_inputs(0)->set_index(1);
    cases.push_back({"an index past the inputs", frame, "indices must ascend"});
  }
  {
    v1::LocalClientFrame frame = exchangeCall(binding, nullptr, 0, 0, 0);
    *frame.mutable_execute()->add_exchange_inputs() =
        frame.execute().exchange_inputs(0);
    cases.push_back({"an index twice", frame, "indices must ascend"});
  }
  {
    v1::LocalClientFrame frame = exchangeCall(binding, nullptr, 0, 0, 0);
    frame.mutable_execute()->mutable_request()->mutable_inputs(0)->set_data(
        std::string(bytes, '\0'));
    cases.push_back({"an input with a payload too", frame, "payload too"});
  }
  for (const Case &c : cases) {
    v1::LocalReply reply = roundTrip(*client, c.frame);
    EXPECT_EQ(reply.code(), static_cast<int>(absl::StatusCode::kInvalidArgument))
        << c.what;
    EXPECT_NE(reply.message().find(c.says), std::string::npos)
        << c.what << ": " << reply.message();
  }
  {
    // A slice for an input the executable does not take: refused before
    // anything is copied (slices cannot multiply the bytes copied).
    v1::LocalClientFrame frame = exchangeCall(binding, nullptr, 0, 0, 0);
    v1::ExecuteRequest &request = *frame.mutable_execute()->mutable_request();
    *request.add_inputs()->mutable_type() = request.inputs(0).type();
    frame.mutable_execute()->add_exchange_inputs()->set_index(1);
    v1::LocalReply reply = roundTrip(*client, frame);
    EXPECT_EQ(reply.code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
    EXPECT_NE(reply.message().find("the call has 2 inputs, the executable takes 1"),
              std::string::npos)
        << reply.message();
  }
  v1::LocalReply good = roundTrip(*client, call(binding));
  ASSERT_EQ(good.code(), 0) << good.message();
  expectAxpy(test::bytesToFloats(good.response().outputs(0).data()));
}

TEST_F(DirectChannelsTest, AskingAgainReplacesTheBufferAndARefusalLeavesNone) {
  DirectChannels channels(*runner);
  auto client = openChannel(channels);
  UniqueFd small, large;
  ASSERT_EQ(askExchange(*client, 4096, &small).code(), 0);
  v1::LocalReply replaced = askExchange(*client, 8192, &large);
  ASSERT_EQ(replaced.code(), 0) << replaced.message();
  EXPECT_EQ(replaced.exchange_bytes(), 8192u);
  void *mapped = ::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED,
                        large.get(), 0);
  ASSERT_NE(mapped, MAP_FAILED);
  // An input past the first buffer's end, inside the second's.
  v1::LocalReply reply = roundTrip(
      *client, exchangeCall(binding, static_cast<uint8_t *>(mapped), 6000, 0, 0));
  ASSERT_EQ(reply.code(), 0) << reply.message();
  expectAxpy(test::bytesToFloats(reply.response().outputs(0).data()));
  ::munmap(mapped, 8192);
  // A refused ask (and one carrying files) leaves the channel without one.
  EXPECT_EQ(askExchange(*client, 0, nullptr).code(),
            static_cast<int>(absl::StatusCode::kInvalidArgument));
  v1::LocalReply none = roundTrip(*client, exchangeCall(binding, nullptr, 0, 0, 0));
  EXPECT_NE(none.message().find("has none"), std::string::npos) << none.message();
  v1::LocalClientFrame withFile;
  withFile.mutable_exchange()->set_size_bytes(4096);
  std::vector<UniqueFd> files;
  v1::LocalReply refused = roundTrip(*client, withFile, {small.get()}, &files);
  EXPECT_EQ(refused.code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(refused.message().find("carries no files"), std::string::npos)
      << refused.message();
  EXPECT_TRUE(files.empty());
}

} // namespace
} // namespace kiln::agent
