//===- GrpcStatus.h - absl::Status <-> RPC status codes ---------*- C++ -*-===//
//
// This file declares the one mapping from Kiln's internal absl::Status to the
// grpc::Status an RPC returns, and the reverse reading of google.rpc codes
// that agents report in TaskResult.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/status.h"

#include <grpcpp/support/status.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::server {

/// Converts an internal status to the status an RPC returns. Every RPC
/// handler in kilnd returns through this function and nowhere else builds a
/// grpc::Status from an absl::Status.
grpc::Status toGrpcStatus(const absl::Status &status);

/// Like toGrpcStatus(status), and an error's message ends with
/// " (request <requestId>)" so a user can quote it to whoever reads the
/// daemon's logs. An empty id adds nothing.
grpc::Status toGrpcStatus(const absl::Status &status,
                          std::string_view requestId);

/// Reads a google.rpc.Code (as agents report it in TaskResult.code) back into
/// an absl::Status. Codes outside the known range become UNKNOWN, and the
/// message says which code arrived.
absl::Status statusFromRpcCode(int32_t code, const std::string &message);

} // namespace kiln::server
