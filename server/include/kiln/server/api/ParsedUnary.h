//===- ParsedUnary.h - unary RPCs that parse their own request -*- C++ -*-===//
//
// This file declares serveParsedUnary: the body of a streamed-unary handler
// that reads (parses) the request itself, so an unparsable request gets
// INVALID_ARGUMENT naming the message type. grpc++'s ordinary sync handlers
// reject such bytes before any Kiln code runs, with INTERNAL and no message.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/Logging.h"
#include "kiln/server/api/GrpcStatus.h"

#include "absl/strings/str_cat.h"
#include <grpcpp/support/sync_stream.h>

namespace kiln::server {

/// Reads one Request from `stream`, answers INVALID_ARGUMENT when its bytes
/// do not parse, else runs `handle(request, response)` and writes the
/// response when that succeeds. The handler gets the request as a mutable
/// lvalue: it may move what it forwards (tensors) out of it.
template <typename Request, typename Response, typename Handler>
grpc::Status
serveParsedUnary(grpc::ServerUnaryStreamer<Request, Response> *stream,
                 Handler &&handle) {
  Request request;
  if (!stream->Read(&request))
    return toGrpcStatus(absl::InvalidArgumentError(absl::StrCat(
        "request is not a valid ", Request::descriptor()->full_name(),
        ": its bytes are truncated or not a serialized protobuf message")),
        currentRequestId());
  Response response;
  grpc::Status status = handle(request, response);
  if (status.ok())
    stream->Write(response);
  return status;
}

} // namespace kiln::server
