//===- RetryPushback.h - no client retries of kilnd's own answers -*- C++ -*-===//
//
// This file declares the server interceptor that tells clients' gRPC retry
// policies not to repeat kilnd's own UNAVAILABLE answers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <vector>

namespace kiln::server {

/// The trailing-metadata key of gRPC's retry pushback (gRFC A6): a negative
/// value asks the client not to retry.
inline constexpr const char *kRetryPushbackKey = "grpc-retry-pushback-ms";

/// Interceptors for every kilnd RPC: a handler's UNAVAILABLE (no device of a
/// kind, kilnd shutting down) carries "grpc-retry-pushback-ms: -1", so a
/// client's retry policy gives it back at once instead of repeating a wait
/// the daemon already made. Transport failures (kilnd down or restarting)
/// carry none and are retried.
std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
retryPushbackInterceptors();

} // namespace kiln::server
