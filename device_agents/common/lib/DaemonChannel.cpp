//===- DaemonChannel.cpp - the agent's channel to kilnd -------------------===//
//
// This file implements dialDaemon: channel credentials from PEM files, and
// a client interceptor that adds the bearer token to every call (gRPC's own
// call credentials refuse plaintext channels, which loopback agents use).
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/DaemonChannel.h"

#include "kiln/common/AtomicFile.h"
#include "kiln/common/Credentials.h"

#include "absl/strings/str_cat.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/client_interceptor.h>

namespace kiln::agent {
namespace {

namespace exp = grpc::experimental;

/// Adds `authorization: Bearer <token>` to a call's initial metadata.
class BearerInterceptor final : public exp::Interceptor {
public:
  explicit BearerInterceptor(const std::string &header) : header(header) {}

  void Intercept(exp::InterceptorBatchMethods *methods) override {
    if (methods->QueryInterceptionHookPoint(
            exp::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA))
      methods->GetSendInitialMetadata()->emplace(kAuthorizationMetadataKey,
                                                 header);
    methods->Proceed();
  }

private:
  const std::string &header;
};

class BearerInterceptorFactory final
    : public exp::ClientInterceptorFactoryInterface {
public:
  explicit BearerInterceptorFactory(std::string token)
      : header(absl::StrCat("Bearer ", token)) {}

  exp::Interceptor *CreateClientInterceptor(exp::ClientRpcInfo *) override {
    return new BearerInterceptor(header);
  }

private:
  std::string header;
};

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
channelCredentials(const DaemonCredentials &credentials) {
  if (credentials.tlsCert.empty() != credentials.tlsKey.empty())
    return absl::InvalidArgumentError(
        "--tls-cert and --tls-key go together: give both or neither");
  if (credentials.tlsCa.empty()) {
    if (!credentials.tlsCert.empty())
      return absl::InvalidArgumentError(
          "--tls-cert needs --tls-ca (the CA bundle kilnd's certificate "
          "chains to)");
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions ssl;
  absl::StatusOr<std::string> ca = readFlagFile(credentials.tlsCa, "--tls-ca");
  if (!ca.ok())
    return ca.status();
  ssl.pem_root_certs = *std::move(ca);
  if (!credentials.tlsCert.empty()) {
    absl::StatusOr<std::string> cert =
        readFlagFile(credentials.tlsCert, "--tls-cert");
    if (!cert.ok())
      return cert.status();
    absl::StatusOr<std::string> key = readFlagFile(credentials.tlsKey, "--tls-key");
    if (!key.ok())
      return key.status();
    ssl.pem_cert_chain = *std::move(cert);
    ssl.pem_private_key = *std::move(key);
  }
  return grpc::SslCredentials(ssl);
}

} // namespace

absl::StatusOr<std::shared_ptr<grpc::Channel>>
dialDaemon(const std::string &address, const DaemonCredentials &credentials,
           std::chrono::milliseconds maxBackoff) {
  if (!credentials.token.empty() && credentials.tlsCa.empty() &&
      !isLoopbackAddress(address))
    return absl::InvalidArgumentError(absl::StrCat(
        "a token (--token, KILN_AGENT_TOKEN) would travel in the clear to ",
        address, ", which is not loopback: give --tls-ca too"));
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> channelCreds =
      channelCredentials(credentials);
  if (!channelCreds.ok())
    return channelCreds.status();
  grpc::ChannelArguments args;
  // gRPC's own reconnect backoff grows to 2 minutes by default; keep it
  // under the session's cap so a restarted daemon is found promptly.
  // "Min reconnect backoff" is gRPC's minimum connect timeout, the time a
  // connection attempt (TCP and the TLS handshake) may take: at 100 ms a
  // TLS handshake on a loaded host or across a slow link never finished
  // in time, attempt after attempt. A daemon that is down still refuses at
  // once, so retries stay prompt.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 5000);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
              static_cast<int>(maxBackoff.count()));
  args.SetMaxReceiveMessageSize(8 << 20);
  if (!credentials.tlsServerName.empty())
    args.SetSslTargetNameOverride(credentials.tlsServerName);
  std::vector<std::unique_ptr<exp::ClientInterceptorFactoryInterface>>
      interceptors;
  if (!credentials.token.empty())
    interceptors.push_back(
        std::make_unique<BearerInterceptorFactory>(credentials.token));
  return exp::CreateCustomChannelWithInterceptors(
      address, *channelCreds, args, std::move(interceptors));
}

} // namespace kiln::agent
