//===- DrainGateTest.cpp - admission control while draining ---------------===//
//
// This file implements tests for DrainGate.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/DrainGate.h"

#include <gtest/gtest.h>

#include <thread>

namespace kiln::server {
namespace {

auto soon() {
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
}

TEST(DrainGateTest, RefusesNewRequestsOnceDrainingAndWaitsForAdmittedOnes) {
  DrainGate gate;
  absl::StatusOr<DrainGate::Ticket> inFlight = gate.enter();
  ASSERT_TRUE(inFlight.ok());
  EXPECT_EQ(gate.inFlight(), 1);
  gate.beginDrain();
  absl::StatusOr<DrainGate::Ticket> late = gate.enter();
  EXPECT_EQ(late.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(late.status().message().find("kilnd is shutting down"),
            std::string::npos);
  EXPECT_FALSE(gate.waitIdle(soon())) << "one request is still in flight";

  std::thread finisher([&] { inFlight = absl::CancelledError("released"); });
  EXPECT_TRUE(gate.waitIdle(std::chrono::steady_clock::now() +
                            std::chrono::seconds(30)));
  finisher.join();
  EXPECT_EQ(gate.inFlight(), 0);
}

TEST(DrainGateTest, AnIdleGateDrainsAtOnce) {
  DrainGate gate;
  { absl::StatusOr<DrainGate::Ticket> done = gate.enter(); }
  gate.beginDrain();
  EXPECT_TRUE(gate.draining());
  EXPECT_TRUE(gate.waitIdle(std::chrono::steady_clock::now()));
}

} // namespace
} // namespace kiln::server
