//===- DirectChannelsTest.cpp - a client's calls on the bound task --------===//
//
// This file tests DirectChannels with the cpu backend: a call carries only
// its inputs and runs as the task the channel was bound to, the channel
// refuses a call that names more, the agent's limit of channels holds (and
// frees up as clients close theirs), and destroying the set ends every
// channel without waiting for its client.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/agent/DirectChannels.h"
#include "kiln/agent/cpu/CpuBackend.h"
#include "kiln/common/Digest.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

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

  static v1::LocalReply roundTrip(FramedSocket &client,
                                  const v1::LocalClientFrame &frame) {
    EXPECT_TRUE(client.send(frame.SerializeAsString()).ok());
    std::string bytes;
    std::vector<UniqueFd> files;
    EXPECT_TRUE(client.receive(bytes, files).ok());
    v1::LocalReply reply;
    EXPECT_TRUE(reply.ParseFromString(bytes));
    return reply;
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

} // namespace
} // namespace kiln::agent
