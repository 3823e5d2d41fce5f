//===- DaemonBlobs.cpp - reading and writing the daemon's blob store ------===//
//
// This file implements GrpcDaemonBlobs: chunked Blobs.Read and Blobs.Write.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/DaemonBlobs.h"

#include "kiln/common/Digest.h"

#include "absl/strings/str_cat.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>

namespace kiln::agent {

DaemonBlobs::~DaemonBlobs() = default;

absl::Status fromGrpcStatus(const grpc::Status &status,
                            absl::string_view what) {
  if (status.ok())
    return absl::OkStatus();
  // gRPC and absl share the google.rpc.Code numbering.
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat(what, ": ", status.error_message()));
}

GrpcDaemonBlobs::GrpcDaemonBlobs(
    std::shared_ptr<grpc::ChannelInterface> channel)
    : stub(v1::Blobs::NewStub(std::move(channel))) {}

absl::Status GrpcDaemonBlobs::read(const v1::Digest &digest,
                                   const ChunkSink &sink) {
  grpc::ClientContext context;
  v1::ReadRequest request;
  *request.mutable_digest() = digest;
  std::unique_ptr<grpc::ClientReader<v1::ReadResponse>> reader =
      stub->Read(&context, request);
  v1::ReadResponse response;
  absl::Status sinkStatus;
  while (reader->Read(&response)) {
    sinkStatus = sink(response.data());
    if (!sinkStatus.ok()) {
      context.TryCancel();
      break;
    }
  }
  grpc::Status status = reader->Finish();
  if (!sinkStatus.ok())
    return sinkStatus;
  return fromGrpcStatus(status,
                        absl::StrCat("Blobs.Read of ", formatDigest(digest)));
}

absl::Status GrpcDaemonBlobs::write(const v1::Digest &digest,
                                    std::string_view bytes) {
  grpc::ClientContext context;
  v1::WriteResponse response;
  std::unique_ptr<grpc::ClientWriter<v1::WriteRequest>> writer =
      stub->Write(&context, &response);
  size_t offset = 0;
  bool streamOk = true;
  do {
    size_t length = std::min(kChunkBytes, bytes.size() - offset);
    v1::WriteRequest request;
    if (offset == 0) {
      *request.mutable_digest() = digest;
      request.set_in_transit(true);
    }
    request.set_offset(static_cast<int64_t>(offset));
    request.set_data(bytes.data() + offset, length);
    offset += length;
    request.set_finish_write(offset == bytes.size());
    streamOk = writer->Write(request);
  } while (streamOk && offset < bytes.size());
  writer->WritesDone();
  std::string what = absl::StrCat("Blobs.Write of ", formatDigest(digest));
  grpc::Status status = writer->Finish();
  if (!status.ok())
    return fromGrpcStatus(status, what);
  if (!streamOk)
    return absl::UnavailableError(
        absl::StrCat(what, ": the stream broke after ", offset, " bytes"));
  if (response.committed_size() != digest.size_bytes())
    return absl::DataLossError(absl::StrCat(
        what, ": the store committed ", response.committed_size(),
        " bytes, expected ", digest.size_bytes()));
  return absl::OkStatus();
}

} // namespace kiln::agent
