//===- DevicesService.cpp - kiln.v1.Devices -------------------------------===//
//
// This file implements DevicesService::ListDevices.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/DevicesService.h"

#include "kiln/server/GrpcStatus.h"

namespace kiln::server {

DevicesService::DevicesService(DeviceRegistry &registry)
    : registry(registry) {}

grpc::Status DevicesService::ListDevices(grpc::ServerContext *,
                                         const v1::ListDevicesRequest *request,
                                         v1::ListDevicesResponse *response) {
  for (v1::Device &device : registry.listDevices(request->kind()))
    *response->add_devices() = std::move(device);
  return toGrpcStatus(absl::OkStatus());
}

} // namespace kiln::server
