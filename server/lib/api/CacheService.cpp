//===- CacheService.cpp - kiln.v1.Cache -----------------------------------===//
//
// This file implements CacheService over the ContentStore's index and the
// CompileCache's counters and salt.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/CacheService.h"

#include "kiln/common/Status.h"
#include "kiln/server/store/CacheSalt.h"
#include "kiln/server/api/GrpcStatus.h"

#include "absl/strings/str_cat.h"

#include <spdlog/spdlog.h>

namespace kiln::server {

CacheService::CacheService(ContentStore &store, CompileCache &cache,
                           std::filesystem::path saltFile,
                           const AccessPolicy &access,
                           EffectiveOptionsFn effectiveOptions)
    : store(store), cache(cache), saltFile(std::move(saltFile)),
      access(access), effectiveOptions(std::move(effectiveOptions)) {}

v1::GetCacheStatsResponse CacheService::stats() const {
  StoreIndex::Stats index = store.index().stats();
  CompileCache::Stats compiles = cache.stats();
  v1::GetCacheStatsResponse response;
  response.set_blob_count(index.blobCount);
  response.set_blob_bytes(index.blobBytes);
  response.set_capacity_bytes(store.capacityBytes());
  response.set_pinned_bytes(index.pinnedBytes);
  response.set_executable_count(cache.entryCount());
  response.set_compile_hits(static_cast<int64_t>(compiles.hits));
  response.set_compile_misses(static_cast<int64_t>(compiles.compiles));
  response.set_evicted_blobs(index.evictedBlobs);
  response.set_evicted_bytes(index.evictedBytes);
  response.set_salt(cache.salt());
  return response;
}

absl::StatusOr<std::string> CacheService::setSalt(const std::string &salt) {
  RETURN_IF_ERROR(validateCacheSalt(salt));
  std::lock_guard<std::mutex> lock(saltMutex);
  RETURN_IF_ERROR(saveCacheSalt(saltFile, salt));
  std::string previous = cache.setSalt(salt);
  spdlog::info("cache salt changed from '{}' to '{}'", previous, salt);
  return previous;
}

grpc::Status CacheService::GetCacheStats(grpc::ServerContext *context,
                                         const v1::GetCacheStatsRequest *,
                                         v1::GetCacheStatsResponse *response) {
  if (grpc::Status denied = access.admit(*context, "kiln.v1.Cache/GetCacheStats"); !denied.ok())
    return denied;
  *response = stats();
  return toGrpcStatus(absl::OkStatus());
}

grpc::Status
CacheService::CollectGarbage(grpc::ServerContext *context,
                             const v1::CollectGarbageRequest *request,
                             v1::CollectGarbageResponse *response) {
  if (grpc::Status denied = access.admit(*context, "kiln.v1.Cache/CollectGarbage"); !denied.ok())
    return denied;
  if (request->target_bytes() < 0)
    return toGrpcStatus(absl::InvalidArgumentError(absl::StrCat(
        "target_bytes must be >= 0 (0: the configured capacity), got ",
        request->target_bytes())));
  StoreIndex::Evicted evicted = store.collectGarbage(request->target_bytes());
  response->set_evicted_blobs(evicted.blobs);
  response->set_evicted_bytes(evicted.bytes);
  response->set_remaining_bytes(store.index().stats().blobBytes);
  return toGrpcStatus(absl::OkStatus());
}

grpc::Status CacheService::SetCacheSalt(grpc::ServerContext *context,
                                        const v1::SetCacheSaltRequest *request,
                                        v1::SetCacheSaltResponse *response) {
  if (grpc::Status denied = access.admit(*context, "kiln.v1.Cache/SetCacheSalt"); !denied.ok())
    return denied;
  absl::StatusOr<std::string> previous = setSalt(request->salt());
  if (!previous.ok())
    return toGrpcStatus(previous.status());
  response->set_previous_salt(*previous);
  return toGrpcStatus(absl::OkStatus());
}

grpc::Status CacheService::ExplainMiss(grpc::ServerContext *context,
                                       const v1::ExplainMissRequest *request,
                                       v1::ExplainMissResponse *response) {
  if (grpc::Status denied = access.admit(*context, "kiln.v1.Cache/ExplainMiss"); !denied.ok())
    return denied;
  if (request->graph().name().empty())
    return toGrpcStatus(absl::InvalidArgumentError(
        "graph.name is empty: ExplainMiss compares the keys of graphs with "
        "the same name"));
  if (request->max_candidates() < 0)
    return toGrpcStatus(absl::InvalidArgumentError(absl::StrCat(
        "max_candidates must be >= 0 (0: 3), got ", request->max_candidates())));
  v1::CompileRequest compile;
  compile.set_target(request->target());
  *compile.mutable_options() = request->options();
  absl::StatusOr<v1::CompileOptions> options =
      effectiveOptions ? effectiveOptions(compile) : compile.options();
  if (!options.ok())
    return toGrpcStatus(options.status());
  *response = cache.explainMiss(request->graph(), request->target(), *options,
                                request->max_candidates());
  return toGrpcStatus(absl::OkStatus());
}

} // namespace kiln::server
