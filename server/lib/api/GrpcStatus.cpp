//===- GrpcStatus.cpp - absl::Status <-> RPC status codes -----------------===//
//
// This file implements the single absl::Status -> grpc::Status mapping used
// at every RPC edge of kilnd.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/GrpcStatus.h"

#include "absl/strings/str_cat.h"

namespace kiln::server {

namespace {
// absl::StatusCode, grpc::StatusCode and google.rpc.Code share one numbering
// (0 OK .. 16 UNAUTHENTICATED); anything else is not a code we understand.
constexpr int kLastKnownCode = 16;
} // namespace

grpc::Status toGrpcStatus(const absl::Status &status) {
  if (status.ok())
    return grpc::Status::OK;
  int code = static_cast<int>(status.code());
  if (code < 0 || code > kLastKnownCode)
    return grpc::Status(grpc::StatusCode::UNKNOWN,
                        absl::StrCat("(internal code ", code, ") ",
                                     status.message()));
  return grpc::Status(static_cast<grpc::StatusCode>(code),
                      std::string(status.message()));
}

grpc::Status toGrpcStatus(const absl::Status &status,
                          std::string_view requestId) {
  grpc::Status mapped = toGrpcStatus(status);
  if (mapped.ok() || requestId.empty())
    return mapped;
  return grpc::Status(mapped.error_code(),
                      absl::StrCat(mapped.error_message(), " (request ",
                                   std::string(requestId), ")"));
}

absl::Status statusFromRpcCode(int32_t code, const std::string &message) {
  if (code == 0)
    return absl::OkStatus();
  if (code < 0 || code > kLastKnownCode)
    return absl::UnknownError(
        absl::StrCat("agent reported unknown status code ", code, ": ",
                     message));
  return absl::Status(static_cast<absl::StatusCode>(code), message);
}

} // namespace kiln::server
