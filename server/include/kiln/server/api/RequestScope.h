//===- RequestScope.h - per-RPC request id and in-flight count --*- C++ -*-===//
//
// This file declares RequestScope, which every kilnd RPC handler opens first:
// it takes the request id from the `kiln-request-id` metadata (or makes one),
// makes it the thread's log context and counts the RPC as in flight.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/Logging.h"

#include <grpcpp/server_context.h>

#include <string>
#include <string_view>

namespace kiln::server {

class Gauge;
struct ServerMetrics;

/// The metadata key clients send their request id in.
inline constexpr const char *kRequestIdMetadataKey = "kiln-request-id";

/// A fresh request id: 32 lowercase hex digits (a random UUID4, no dashes).
std::string newRequestId();

/// Whether a client's request id may be logged: 1 to 128 characters of
/// [A-Za-z0-9._-].
bool validRequestId(std::string_view id);

/// `id` when valid, else a new one (a client's id is never logged as sent
/// when it could forge or flood log lines).
std::string requestIdOrNew(std::string_view id);

/// The id in `context`'s metadata when it is 1..128 characters of
/// [A-Za-z0-9._-]; otherwise a fresh one.
std::string requestIdFrom(const grpc::ServerContext &context);

/// Lives for one RPC handler. Not copyable.
class RequestScope {
public:
  /// `metrics` may be null (no in-flight gauge).
  RequestScope(const grpc::ServerContext &context, std::string_view method,
               ServerMetrics *metrics);
  ~RequestScope();
  RequestScope(const RequestScope &) = delete;
  RequestScope &operator=(const RequestScope &) = delete;

  const std::string &id() const { return requestId; }

private:
  std::string requestId;
  ScopedRequestId logContext;
  Gauge *inFlight = nullptr;
};

} // namespace kiln::server
