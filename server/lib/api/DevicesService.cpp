//===- DevicesService.cpp - kiln.v1.Devices -------------------------------===//
//
// This file implements DevicesService::ListDevices.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/DevicesService.h"

#include "kiln/server/api/GrpcStatus.h"

namespace kiln::server {

DevicesService::DevicesService(DeviceRegistry &registry,
                               const AccessPolicy &access)
    : registry(registry), access(access) {}

grpc::Status DevicesService::ListDevices(grpc::ServerContext *context,
                                         const v1::ListDevicesRequest *request,
                                         v1::ListDevicesResponse *response) {
  if (grpc::Status denied = access.admit(*context, "kiln.v1.Devices/ListDevices"); !denied.ok())
    return denied;
  for (v1::Device &device : registry.listDevices(request->kind()))
    *response->add_devices() = std::move(device);
  return toGrpcStatus(absl::OkStatus());
}

} // namespace kiln::server
