//===- RetryPushback.cpp - no client retries of kilnd's own answers -------===//
//
// This file implements the interceptor that adds a negative retry pushback
// to the UNAVAILABLE statuses kilnd's handlers return.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/RetryPushback.h"

namespace kiln::server {

namespace {

class RetryPushback final : public grpc::experimental::Interceptor {
public:
  void Intercept(grpc::experimental::InterceptorBatchMethods *methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS) &&
        methods->GetSendStatus().error_code() == grpc::StatusCode::UNAVAILABLE) {
      if (std::multimap<std::string, std::string> *trailers =
              methods->GetSendTrailingMetadata())
        trailers->emplace(kRetryPushbackKey, "-1");
    }
    methods->Proceed();
  }
};

class RetryPushbackFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
public:
  grpc::experimental::Interceptor *
  CreateServerInterceptor(grpc::experimental::ServerRpcInfo *) override {
    return new RetryPushback();
  }
};

} // namespace

std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
retryPushbackInterceptors() {
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      factories;
  factories.push_back(std::make_unique<RetryPushbackFactory>());
  return factories;
}

} // namespace kiln::server
