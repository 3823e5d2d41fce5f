//===- DaemonService.cpp - kiln.v1.Daemon ---------------------------------===//
//
// This file implements DaemonService::GetInfo.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/DaemonService.h"

#include "kiln/server/api/GrpcStatus.h"

namespace kiln::server {

DaemonService::DaemonService(v1::DaemonInfo info, const AccessPolicy &access)
    : info(std::move(info)), access(access) {}

grpc::Status DaemonService::GetInfo(grpc::ServerContext *context,
                                    const v1::GetDaemonInfoRequest *,
                                    v1::DaemonInfo *response) {
  if (grpc::Status denied = access.admit(*context, "kiln.v1.Daemon/GetInfo");
      !denied.ok())
    return denied;
  *response = info;
  return toGrpcStatus(absl::OkStatus());
}

} // namespace kiln::server
