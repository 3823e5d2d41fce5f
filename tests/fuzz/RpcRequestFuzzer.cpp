//===- RpcRequestFuzzer.cpp - fuzz the validation of every kilnd RPC ------===//
//
// libFuzzer target: the first byte picks one of kilnd's ten RPCs, the rest is
// its request message, sent through an in-process channel to a real
// KilnServer (real store, cache, scheduler and access gate; a stand-in
// compiler, no agents, no device wait). Every request must get a status and
// leave kilnd serving.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/daemon/KilnServer.h"

#include "kiln/v1/agent.grpc.pb.h"
#include "kiln/v1/blobs.grpc.pb.h"
#include "kiln/v1/cache.grpc.pb.h"
#include "kiln/v1/compiler.grpc.pb.h"
#include "kiln/v1/devices.grpc.pb.h"
#include "kiln/v1/executor.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace {

using namespace kiln;

/// A compiler that makes a well-formed record for any graph.
absl::StatusOr<compiler::CompiledExecutable>
standInCompiler(const v1::Graph &graph, const compiler::CompileOptions &options) {
  compiler::CompiledExecutable out;
  out.artifact = "stand-in artifact for " + graph.name();
  out.manifest.set_entry_symbol("kiln_invoke");
  out.manifest.set_target(options.target);
  for (const v1::Value &input : graph.inputs()) {
    v1::ManifestArgument *argument = out.manifest.add_inputs();
    argument->set_name(input.name());
    *argument->mutable_type() = input.type();
  }
  return out;
}

struct Daemon {
  std::unique_ptr<server::KilnServer> server;
  std::shared_ptr<grpc::Channel> channel;
};

Daemon &daemon() {
  static Daemon *made = [] {
    char pattern[] = "/tmp/kiln-fuzz-rpc-XXXXXX";
    if (!::mkdtemp(pattern)) {
      std::perror("mkdtemp");
      std::abort();
    }
    std::filesystem::path dir = pattern;
    server::ServerOptions options;
    options.listenAddress = "127.0.0.1:0";
    options.cacheDir = dir;
    options.compiler = standInCompiler;
    options.compilerBuildId = "fuzz";
    options.supportedTargets = {"cpu"};
    options.deviceWait = std::chrono::milliseconds(0);
    options.executeTimeout = std::chrono::milliseconds(2000);
    auto *daemon = new Daemon;
    absl::StatusOr<std::unique_ptr<server::KilnServer>> started =
        server::KilnServer::start(options);
    if (!started.ok())
      std::abort();
    daemon->server = *std::move(started);
    daemon->channel = daemon->server->inProcessChannel();
    return daemon;
  }();
  return *made;
}

template <typename Message> bool parse(const uint8_t *data, size_t size, Message &out) {
  return out.ParseFromArray(data, static_cast<int>(size));
}

void deadline(grpc::ClientContext &context) {
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const std::shared_ptr<grpc::Channel> &channel = daemon().channel;
  uint8_t method = data[0] % 10;
  ++data;
  --size;
  grpc::ClientContext context;
  deadline(context);
  switch (method) {
  case 0: {
    v1::CompileRequest request;
    v1::CompileResponse response;
    if (parse(data, size, request))
      (void)v1::Compiler::NewStub(channel)->Compile(&context, request, &response);
    break;
  }
  case 1: {
    v1::ExecuteRequest request;
    v1::ExecuteResponse response;
    if (parse(data, size, request))
      (void)v1::Executor::NewStub(channel)->Execute(&context, request, &response);
    break;
  }
  case 2: {
    v1::FindMissingRequest request;
    v1::FindMissingResponse response;
    if (parse(data, size, request))
      (void)v1::Blobs::NewStub(channel)->FindMissing(&context, request, &response);
    break;
  }
  case 3: {
    v1::WriteRequest request;
    v1::WriteResponse response;
    if (!parse(data, size, request))
      break;
    auto writer = v1::Blobs::NewStub(channel)->Write(&context, &response);
    writer->Write(request);
    writer->WritesDone();
    (void)writer->Finish();
    break;
  }
  case 4: {
    v1::ReadRequest request;
    if (!parse(data, size, request))
      break;
    auto reader = v1::Blobs::NewStub(channel)->Read(&context, request);
    v1::ReadResponse chunk;
    while (reader->Read(&chunk)) {
    }
    (void)reader->Finish();
    break;
  }
  case 5: {
    v1::ListDevicesRequest request;
    v1::ListDevicesResponse response;
    if (parse(data, size, request))
      (void)v1::Devices::NewStub(channel)->ListDevices(&context, request, &response);
    break;
  }
  case 6: {
    v1::GetCacheStatsRequest request;
    v1::GetCacheStatsResponse response;
    if (parse(data, size, request))
      (void)v1::Cache::NewStub(channel)->GetCacheStats(&context, request, &response);
    break;
  }
  case 7: {
    v1::CollectGarbageRequest request;
    v1::CollectGarbageResponse response;
    if (parse(data, size, request))
      (void)v1::Cache::NewStub(channel)->CollectGarbage(&context, request, &response);
    break;
  }
  case 8: {
    v1::SetCacheSaltRequest request;
    v1::SetCacheSaltResponse response;
    if (parse(data, size, request))
      (void)v1::Cache::NewStub(channel)->SetCacheSalt(&context, request, &response);
    break;
  }
  case 9: {
    v1::AgentMessage message;
    if (!parse(data, size, message))
      break;
    auto stream = v1::Agent::NewStub(channel)->Connect(&context);
    stream->Write(message);
    stream->WritesDone();
    v1::DaemonMessage reply;
    while (stream->Read(&reply)) {
    }
    (void)stream->Finish();
    break;
  }
  }
  // Whatever the request did, kilnd still answers.
  grpc::ClientContext check;
  deadline(check);
  v1::GetCacheStatsResponse stats;
  if (!v1::Cache::NewStub(channel)
           ->GetCacheStats(&check, v1::GetCacheStatsRequest(), &stats)
           .ok())
    std::abort();
  return 0;
}
