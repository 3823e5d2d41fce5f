//===- DaemonBlobs.h - reading and writing the daemon's blob store --------===//
//
// This file declares DaemonBlobs, the agent's view of the daemon's Blobs
// service (chunked Read and Write), and GrpcDaemonBlobs, its gRPC client.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/blobs.grpc.pb.h"

#include "absl/status/status.h"

#include <functional>
#include <memory>
#include <string_view>

namespace kiln::agent {

/// Receives one chunk of a blob being read; a non-OK status stops the read.
using ChunkSink = std::function<absl::Status(std::string_view chunk)>;

/// Where blobs the agent lacks come from and large outputs go.
class DaemonBlobs {
public:
  virtual ~DaemonBlobs();

  /// Streams the bytes of `digest` to `sink`, in order. The caller verifies
  /// them; this only moves bytes.
  virtual absl::Status read(const v1::Digest &digest, const ChunkSink &sink) = 0;

  /// Uploads an output, `bytes`, whose digest is `digest`, as an in-transit
  /// blob (WriteRequest.in_transit: the store does not fsync it).
  virtual absl::Status write(const v1::Digest &digest,
                             std::string_view bytes) = 0;
};

/// DaemonBlobs over kiln.v1.Blobs on a gRPC channel.
class GrpcDaemonBlobs : public DaemonBlobs {
public:
  /// Bytes per Write message (the proto allows up to 1 MiB).
  static constexpr size_t kChunkBytes = 1 << 20;

  explicit GrpcDaemonBlobs(std::shared_ptr<grpc::ChannelInterface> channel);

  absl::Status read(const v1::Digest &digest, const ChunkSink &sink) override;
  absl::Status write(const v1::Digest &digest, std::string_view bytes) override;

private:
  std::unique_ptr<v1::Blobs::Stub> stub;
};

/// The absl::Status of a finished gRPC call, with `what` prefixed.
absl::Status fromGrpcStatus(const grpc::Status &status,
                            absl::string_view what);

} // namespace kiln::agent
