//===- RequestScope.cpp - per-RPC request id and in-flight count ----------===//
//
// This file implements request id generation and validation and the
// RequestScope every handler opens.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/RequestScope.h"

#include "kiln/server/api/ServerMetrics.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"

#include <random>

namespace kiln::server {

bool validRequestId(std::string_view id) {
  if (id.empty() || id.size() > 128)
    return false;
  for (char c : id)
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.')
      return false;
  return true;
}

std::string requestIdOrNew(std::string_view id) {
  return validRequestId(id) ? std::string(id) : newRequestId();
}

std::string newRequestId() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  uint64_t high = engine(), low = engine();
  // UUID version 4, variant 10xx.
  high = (high & ~0xF000ull) | 0x4000ull;
  low = (low & ~(0xC000ull << 48)) | (0x8000ull << 48);
  return absl::StrFormat("%016x%016x", high, low);
}

std::string requestIdFrom(const grpc::ServerContext &context) {
  const auto &metadata = context.client_metadata();
  auto found = metadata.find(kRequestIdMetadataKey);
  if (found != metadata.end()) {
    return requestIdOrNew(
        std::string_view(found->second.data(), found->second.size()));
  }
  return newRequestId();
}

RequestScope::RequestScope(const grpc::ServerContext &context,
                           std::string_view method, ServerMetrics *metrics)
    : requestId(requestIdFrom(context)), logContext(requestId) {
  if (metrics) {
    inFlight = &metrics->requestsInFlight.labels({std::string(method)});
    inFlight->inc();
  }
}

RequestScope::~RequestScope() {
  if (inFlight)
    inFlight->dec();
}

} // namespace kiln::server
