//===- CacheService.h - kiln.v1.Cache ---------------------------*- C++ -*-===//
//
// This file declares CacheService: stats, garbage collection and the
// compile-key salt of kilnd's content store and compile cache.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/api/AccessPolicy.h"
#include "kiln/server/store/CompileCache.h"
#include "kiln/server/store/ContentStore.h"
#include "kiln/v1/cache.grpc.pb.h"

#include <filesystem>
#include <functional>
#include <mutex>

namespace kiln::server {

/// The options a Compile request compiles with (CompilerService's
/// effectiveOptions): what ExplainMiss computes keys with.
using EffectiveOptionsFn = std::function<absl::StatusOr<v1::CompileOptions>(
    const v1::CompileRequest &request)>;

/// Serves kiln.v1.Cache (what `kiln cache stats|gc|salt|why` calls).
class CacheService final : public v1::Cache::Service {
public:
  /// `saltFile` is where SetCacheSalt persists the salt. Without
  /// `effectiveOptions` ExplainMiss keys the options as sent.
  CacheService(ContentStore &store, CompileCache &cache,
               std::filesystem::path saltFile, const AccessPolicy &access,
               EffectiveOptionsFn effectiveOptions = nullptr);

  grpc::Status GetCacheStats(grpc::ServerContext *context,
                             const v1::GetCacheStatsRequest *request,
                             v1::GetCacheStatsResponse *response) override;
  grpc::Status CollectGarbage(grpc::ServerContext *context,
                              const v1::CollectGarbageRequest *request,
                              v1::CollectGarbageResponse *response) override;
  grpc::Status SetCacheSalt(grpc::ServerContext *context,
                            const v1::SetCacheSaltRequest *request,
                            v1::SetCacheSaltResponse *response) override;
  grpc::Status ExplainMiss(grpc::ServerContext *context,
                           const v1::ExplainMissRequest *request,
                           v1::ExplainMissResponse *response) override;

  /// The stats GetCacheStats answers.
  v1::GetCacheStatsResponse stats() const;
  /// Persists and installs `salt`; returns the previous one.
  absl::StatusOr<std::string> setSalt(const std::string &salt);

private:
  ContentStore &store;
  CompileCache &cache;
  std::filesystem::path saltFile;
  std::mutex saltMutex;
  const AccessPolicy &access;
  EffectiveOptionsFn effectiveOptions;
};

} // namespace kiln::server
