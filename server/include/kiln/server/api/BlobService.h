//===- BlobService.h - kiln.v1.Blobs over the content store -----*- C++ -*-===//
//
// This file declares BlobService: FindMissing, chunked Write and chunked Read
// over the ContentStore.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/api/AccessPolicy.h"
#include "kiln/server/store/BlobQuota.h"
#include "kiln/server/store/ContentStore.h"
#include "kiln/server/store/RemoteCache.h"
#include "kiln/server/api/ServerMetrics.h"
#include "kiln/v1/blobs.grpc.pb.h"

#include <cstdint>

namespace kiln::server {

/// Largest chunk a Write message may carry and a Read message carries.
inline constexpr int64_t kBlobChunkBytes = 1 << 20;

/// Serves kiln.v1.Blobs.
class BlobService final : public v1::Blobs::Service {
public:
  /// Blob bytes in and out are counted in `metrics`.
  /// Writes declaring more than `maxBlobBytes` (0: no cap) are refused with
  /// RESOURCE_EXHAUSTED before anything is written.
  BlobService(ContentStore &store, ServerMetrics &metrics,
              const AccessPolicy &access, int64_t maxBlobBytes = 0,
              int64_t quotaBytes = 0);

  /// With a shared tier, FindMissing first copies from it whatever it holds
  /// of what the store lacks (checked), so a client uploads only weights no
  /// replica has shared. Not owned; set before serving.
  void setRemote(RemoteCache *remote) { this->remote = remote; }

  grpc::Status FindMissing(grpc::ServerContext *context,
                           const v1::FindMissingRequest *request,
                           v1::FindMissingResponse *response) override;

  grpc::Status Write(grpc::ServerContext *context,
                     grpc::ServerReader<v1::WriteRequest> *reader,
                     v1::WriteResponse *response) override;

  grpc::Status Read(grpc::ServerContext *context,
                    const v1::ReadRequest *request,
                    grpc::ServerWriter<v1::ReadResponse> *writer) override;

private:
  absl::Status write(grpc::ServerReader<v1::WriteRequest> *reader,
                     v1::WriteResponse *response, const Principal &caller);
  absl::Status read(const v1::ReadRequest &request,
                    grpc::ServerWriter<v1::ReadResponse> *writer);

  ContentStore &store;
  ServerMetrics &metrics;
  const AccessPolicy &access;
  int64_t maxBlobBytes;
  RemoteCache *remote = nullptr;
  /// Per authenticated user (role user); admins, agents and callers of a
  /// kilnd without credentials are not counted.
  BlobQuota quota;
};

} // namespace kiln::server
