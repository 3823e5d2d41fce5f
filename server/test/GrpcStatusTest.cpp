//===- GrpcStatusTest.cpp - absl::Status <-> gRPC status ------------------===//
//
// This file implements tests for the single status mapping at the RPC edge.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/GrpcStatus.h"

#include <gtest/gtest.h>

namespace kiln::server {
namespace {

TEST(GrpcStatusTest, OkMapsToOk) {
  EXPECT_TRUE(toGrpcStatus(absl::OkStatus()).ok());
}

TEST(GrpcStatusTest, EveryCodeKeepsItsNumberAndMessage) {
  for (int code = 1; code <= 16; ++code) {
    absl::Status status(static_cast<absl::StatusCode>(code), "what happened");
    grpc::Status mapped = toGrpcStatus(status);
    EXPECT_EQ(static_cast<int>(mapped.error_code()), code);
    EXPECT_EQ(mapped.error_message(), "what happened");
  }
  EXPECT_EQ(toGrpcStatus(absl::NotFoundError("x")).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(toGrpcStatus(absl::FailedPreconditionError("x")).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

TEST(GrpcStatusTest, UnknownInternalCodeBecomesUnknown) {
  absl::Status odd(static_cast<absl::StatusCode>(42), "odd");
  grpc::Status mapped = toGrpcStatus(odd);
  EXPECT_EQ(mapped.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_NE(mapped.error_message().find("odd"), std::string::npos);
}

TEST(GrpcStatusTest, RequestIdEndsEveryErrorMessage) {
  grpc::Status mapped =
      toGrpcStatus(absl::InvalidArgumentError("bad shape"), "abc123");
  EXPECT_EQ(mapped.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(mapped.error_message(), "bad shape (request abc123)");
  absl::Status odd(static_cast<absl::StatusCode>(42), "odd");
  std::string oddMessage = toGrpcStatus(odd, "r1").error_message();
  EXPECT_NE(oddMessage.find("odd"), std::string::npos);
  EXPECT_TRUE(oddMessage.ends_with(" (request r1)")) << oddMessage;
}

TEST(GrpcStatusTest, RequestIdLeavesOkAndEmptyIdsAlone) {
  grpc::Status ok = toGrpcStatus(absl::OkStatus(), "abc123");
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.error_message(), "");
  EXPECT_EQ(toGrpcStatus(absl::NotFoundError("gone"), "").error_message(),
            "gone");
}

TEST(GrpcStatusTest, AgentCodesReadBack) {
  EXPECT_TRUE(statusFromRpcCode(0, "").ok());
  absl::Status internal = statusFromRpcCode(13, "kernel crashed");
  EXPECT_EQ(internal.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(internal.message(), "kernel crashed");
  absl::Status bogus = statusFromRpcCode(99, "??");
  EXPECT_EQ(bogus.code(), absl::StatusCode::kUnknown);
  EXPECT_NE(bogus.message().find("99"), absl::string_view::npos);
}

} // namespace
} // namespace kiln::server
