//===- AgentSessionSetTest.cpp - one agent serving several daemons --------===//
//
// This file implements tests for AgentSessionSet against two fake daemons
// over real gRPC: replicas joined and left as the served list changes, one
// replica going away leaving the other served, and resolveDaemons.
//
//===----------------------------------------------------------------------===//
#include "FakeDaemon.h"
#include "TestSupport.h"

#include "kiln/agent/AgentSessionSet.h"
#include "kiln/agent/cpu/CpuBackend.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kiln::agent {
namespace {

using test::FakeDaemon;
using test::TempDir;

class AgentSessionSetTest : public ::testing::Test {
protected:
  void SetUp() override {
    options.agentId = "cpu-set-agent";
    options.cacheDir = dir.path() / "cache";
    options.initialBackoff = std::chrono::milliseconds(10);
    options.maxBackoff = std::chrono::milliseconds(200);
    auto opened = AgentStores::open(options);
    ASSERT_TRUE(opened.ok()) << opened.status();
    stores = *opened;
    set = std::make_unique<AgentSessionSet>(options, backend, stores);
  }

  TempDir dir;
  FakeDaemon a{20}, b{20};
  CpuBackend backend;
  AgentOptions options;
  std::shared_ptr<AgentStores> stores;
  std::unique_ptr<AgentSessionSet> set;
};

TEST_F(AgentSessionSetTest, JoinsAndLeavesReplicasAsTheListChanges) {
  ASSERT_TRUE(set->serve({a.address()}).ok());
  ASSERT_TRUE(a.waitFor([&] { return !a.registrations().empty(); }));
  ASSERT_TRUE(set->serve({a.address(), b.address()}).ok());
  ASSERT_TRUE(b.waitFor([&] { return !b.registrations().empty(); }));
  EXPECT_EQ(a.registrations().size(), 1u); // A's session was left alone
  EXPECT_EQ(a.registrations().front().agent_id(), "cpu-set-agent");
  EXPECT_EQ(b.registrations().front().agent_id(), "cpu-set-agent");

  // A leaves the list: its session stops, so it hears nothing more from us.
  ASSERT_TRUE(set->serve({b.address()}).ok());
  EXPECT_EQ(set->addresses(), std::vector<std::string>{b.address()});
  int heartbeats = a.heartbeats();
  int bHeartbeats = b.heartbeats();
  ASSERT_TRUE(b.waitFor([&] { return b.heartbeats() >= bHeartbeats + 3; }));
  EXPECT_LE(a.heartbeats(), heartbeats + 1);
  set->stop();
  EXPECT_TRUE(set->wait().ok());
}

TEST_F(AgentSessionSetTest, AReplicaGoingAwayLeavesTheOtherServed) {
  ASSERT_TRUE(set->serve({a.address(), b.address()}).ok());
  ASSERT_TRUE(b.waitFor([&] { return !b.registrations().empty(); }));
  ASSERT_TRUE(a.waitFor([&] { return !a.registrations().empty(); }));
  a.dropConnection(); // A's stream breaks: that session reconnects
  int bHeartbeats = b.heartbeats();
  ASSERT_TRUE(b.waitFor([&] { return b.heartbeats() >= bHeartbeats + 3; }));
  ASSERT_TRUE(a.waitFor([&] { return a.registrations().size() >= 2; }));
  set->stop();
  EXPECT_TRUE(set->wait().ok());
}

TEST(ResolveDaemonsTest, NamesResolveToEveryAddressAndBadOnesAreNamed) {
  auto local = resolveDaemons("localhost:50051");
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_NE(std::find(local->begin(), local->end(), "127.0.0.1:50051"), local->end());
  auto literal = resolveDaemons("[::1]:7");
  ASSERT_TRUE(literal.ok()) << literal.status();
  EXPECT_EQ(*literal, std::vector<std::string>{"[::1]:7"});
  EXPECT_TRUE(absl::IsInvalidArgument(resolveDaemons("no-port").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(resolveDaemons("host:99999").status()));
  EXPECT_TRUE(absl::IsUnavailable(resolveDaemons("no-such-host.invalid:1").status()));
}

} // namespace
} // namespace kiln::agent
