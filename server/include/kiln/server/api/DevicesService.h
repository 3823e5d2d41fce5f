//===- DevicesService.h - kiln.v1.Devices -----------------------*- C++ -*-===//
//
// This file declares DevicesService, which lists registered devices.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/api/AccessPolicy.h"
#include "kiln/server/sched/DeviceRegistry.h"
#include "kiln/v1/devices.grpc.pb.h"

namespace kiln::server {

/// Serves kiln.v1.Devices from the DeviceRegistry.
class DevicesService final : public v1::Devices::Service {
public:
  DevicesService(DeviceRegistry &registry, const AccessPolicy &access);

  grpc::Status ListDevices(grpc::ServerContext *context,
                           const v1::ListDevicesRequest *request,
                           v1::ListDevicesResponse *response) override;

private:
  DeviceRegistry &registry;
  const AccessPolicy &access;
};

} // namespace kiln::server
