//===- DaemonService.h - kiln.v1.Daemon -------------------------*- C++ -*-===//
//
// This file declares DaemonService, which says what this kilnd is: its
// version, compiler build and process id.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/api/AccessPolicy.h"
#include "kiln/v1/daemon.grpc.pb.h"

namespace kiln::server {

/// Serves kiln.v1.Daemon from facts fixed at startup.
class DaemonService final : public v1::Daemon::Service {
public:
  DaemonService(v1::DaemonInfo info, const AccessPolicy &access);

  grpc::Status GetInfo(grpc::ServerContext *context,
                       const v1::GetDaemonInfoRequest *request,
                       v1::DaemonInfo *response) override;

private:
  const v1::DaemonInfo info;
  const AccessPolicy &access;
};

} // namespace kiln::server
