//===- ServerTest.cpp - kilnd's services over real loopback gRPC ----------===//
//
// This file implements end-to-end tests of KilnServer in process: a fake
// compiler, a fake agent dialing Agent.Connect, and stubs for each service.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/daemon/KilnServer.h"

#include "FakeCompiler.h"
#include "TestUtil.h"
#include "kiln/common/AgentProtocol.h"
#include "kiln/common/TaskSignature.h"
#include "kiln/common/Digest.h"
#include "kiln/common/TensorTypes.h"
#include "kiln/server/sched/DeviceRegistry.h"
#include "kiln/v1/agent.grpc.pb.h"
#include "kiln/v1/blobs.grpc.pb.h"
#include "kiln/v1/compiler.grpc.pb.h"
#include "kiln/v1/devices.grpc.pb.h"
#include "kiln/v1/executor.grpc.pb.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <gtest/gtest.h>

#include <mutex>

#include <thread>

namespace kiln::server {
namespace {

using namespace std::chrono_literals;
using testing::f32;
using testing::FakeCompiler;
using testing::linearGraph;
using testing::TempDir;

/// An agent over a real Connect stream: answers each Task with zero-filled
/// outputs of the manifest's types.
class GrpcFakeAgent {
public:
  GrpcFakeAgent(std::shared_ptr<grpc::Channel> channel, std::string id)
      : stub(v1::Agent::NewStub(channel)) {
    stream = stub->Connect(&context);
    v1::AgentMessage hello;
    hello.mutable_register_()->set_agent_id(id);
    hello.mutable_register_()->set_protocol_version(kAgentProtocolVersion);
    hello.mutable_register_()->add_devices()->set_kind("cpu");
    EXPECT_TRUE(stream->Write(hello));
    v1::DaemonMessage registered;
    EXPECT_TRUE(stream->Read(&registered));
    EXPECT_TRUE(registered.has_registered());
    absl::StatusOr<TaskVerifier> key =
        TaskVerifier::fromPem(registered.registered().task_public_key());
    EXPECT_TRUE(key.ok()) << key.status();
    if (key.ok())
      verifier.emplace(*std::move(key));
    loop = std::thread([this] { serve(); });
  }
  ~GrpcFakeAgent() { disconnect(); }

  void disconnect() {
    if (!loop.joinable())
      return;
    context.TryCancel();
    loop.join();
  }

private:
  void serve() {
    v1::DaemonMessage message;
    while (stream->Read(&message)) {
      const v1::Task &task = message.task();
      v1::AgentMessage reply;
      v1::TaskResult &result = *reply.mutable_result();
      result.set_task_id(task.task_id());
      // Every task carries kilnd's signature, as real agents demand.
      ++tasksSeen;
      {
        std::lock_guard<std::mutex> lock(seenMutex);
        lastParameters = task.parameters_size();
        lastParameterSet = task.parameter_set().hash();
      }
      if (verifier && verifier->verify(task).ok())
        ++tasksSigned;
      for (const v1::ManifestArgument &output :
           task.record().manifest().outputs()) {
        v1::Tensor *tensor = result.add_outputs();
        *tensor->mutable_type() = output.type();
        tensor->set_data(std::string(*byteSize(output.type()), '\0'));
      }
      result.mutable_timings()->set_run_us(7);
      if (!stream->Write(reply))
        break;
    }
  }

public:
  std::atomic<int> tasksSeen{0}, tasksSigned{0};
  /// What the last task named as parameters: its list's length, and its
  /// parameter set's hash ("" for none).
  std::mutex seenMutex;
  int lastParameters = 0;
  std::string lastParameterSet;

private:
  std::optional<TaskVerifier> verifier;
  std::unique_ptr<v1::Agent::Stub> stub;
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::DaemonMessage>>
      stream;
  std::thread loop;
};

class ServerTest : public ::testing::Test {
protected:
  void SetUp() override {
    ServerOptions options;
    options.listenAddress = "127.0.0.1:0";
    options.cacheDir = temp.path();
    options.compileWorkers = 2;
    options.deviceWait = 100ms;
    options.heartbeatInterval = 60s;
    options.compiler = fake.function();
    options.compilerBuildId = "test-build";
    options.maxBlobBytes = int64_t{16} << 20;
    options.supportedTargets = {"cpu"};
    options.transitMemoryBytes = transitMemoryBytes;
    absl::StatusOr<std::unique_ptr<KilnServer>> started =
        KilnServer::start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    server = std::move(*started);
    ASSERT_GT(server->port(), 0);
    channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server->port()),
                                  grpc::InsecureChannelCredentials());
    blobs = v1::Blobs::NewStub(channel);
    compiler = v1::Compiler::NewStub(channel);
    executor = v1::Executor::NewStub(channel);
    devices = v1::Devices::NewStub(channel);
  }

  /// Blobs.Write of `bytes` in messages of `chunk` bytes, the first
  /// declaring `declared` (with no hash: for kilnd to name).
  grpc::Status write(const std::string &bytes, const v1::Digest &declared,
                     bool inTransit, size_t chunk, v1::WriteResponse &response) {
    grpc::ClientContext context;
    auto writer = blobs->Write(&context, &response);
    size_t offset = 0;
    do {
      v1::WriteRequest request;
      if (offset == 0) {
        *request.mutable_digest() = declared;
        request.set_in_transit(inTransit);
      }
      request.set_offset(offset);
      request.set_data(bytes.substr(offset, chunk));
      offset += chunk;
      request.set_finish_write(offset >= bytes.size());
      if (!writer->Write(request))
        break; // kilnd answered already
    } while (offset < bytes.size());
    writer->WritesDone();
    return writer->Finish();
  }

  v1::Digest upload(const std::string &bytes, size_t chunk = 1 << 20,
                    bool inTransit = false) {
    v1::Digest digest = digestOf(bytes);
    v1::WriteResponse response;
    grpc::Status status = write(bytes, digest, inTransit, chunk, response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.committed_size(), digest.size_bytes());
    EXPECT_EQ(response.digest().hash(), digest.hash());
    return digest;
  }

  /// An in-transit Blobs.Write of `bytes` declaring `size` bytes and no
  /// hash: kilnd names it (response.digest).
  grpc::Status uploadUnnamed(const std::string &bytes, int64_t size,
                             v1::WriteResponse &response,
                             bool inTransit = true) {
    v1::Digest unnamed;
    unnamed.set_size_bytes(size);
    return write(bytes, unnamed, inTransit, 300 << 10, response);
  }

  grpc::Status compile(const v1::Graph &graph, v1::CompileResponse &response,
                       const std::string &target = "cpu") {
    grpc::ClientContext context;
    v1::CompileRequest request;
    *request.mutable_graph() = graph;
    request.set_target(target);
    return compiler->Compile(&context, request, &response);
  }

  /// The linear model (x: f32[2, 16], weights uploaded as `w`) compiled,
  /// as an Execute request with x's type set and no payload or parameters
  /// yet.
  v1::ExecuteRequest linearExecuteRequest(v1::Digest &w) {
    w = upload(weights);
    v1::CompileResponse compiled;
    grpc::Status status = compile(linearGraph(2, 16, 4, w), compiled);
    EXPECT_TRUE(status.ok()) << status.error_message();
    v1::ExecuteRequest request;
    *request.mutable_executable() = compiled.executable();
    *request.add_inputs()->mutable_type() = f32({2, 16});
    return request;
  }

  /// The store's memory tier (ServerOptions::transitMemoryBytes).
  int64_t transitMemoryBytes = 0;
  TempDir temp;
  FakeCompiler fake;
  std::unique_ptr<KilnServer> server;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Blobs::Stub> blobs;
  std::unique_ptr<v1::Compiler::Stub> compiler;
  std::unique_ptr<v1::Executor::Stub> executor;
  std::unique_ptr<v1::Devices::Stub> devices;
  const std::string weights = std::string(16 * 4 * 4, '\1');
};

TEST_F(ServerTest, BlobsRoundTripInChunks) {
  std::string bytes(3 * (1 << 20) + 5, 'k');
  v1::Digest digest = upload(bytes);
  grpc::ClientContext findContext;
  v1::FindMissingRequest find;
  *find.add_digests() = digest;
  *find.add_digests() = digestOf("absent");
  v1::FindMissingResponse missing;
  ASSERT_TRUE(blobs->FindMissing(&findContext, find, &missing).ok());
  ASSERT_EQ(missing.missing_digests_size(), 1);
  EXPECT_EQ(missing.missing_digests(0).hash(), digestOf("absent").hash());

  grpc::ClientContext readContext;
  v1::ReadRequest read;
  *read.mutable_digest() = digest;
  auto reader = blobs->Read(&readContext, read);
  std::string back;
  v1::ReadResponse chunk;
  int chunks = 0;
  while (reader->Read(&chunk)) {
    EXPECT_LE(chunk.data().size(), 1u << 20);
    back += chunk.data();
    ++chunks;
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(chunks, 4);
  EXPECT_TRUE(back == bytes);
}

/// Reads a blob through Blobs.Read; its bytes, empty on failure.
std::string readBlob(v1::Blobs::Stub &blobs, const v1::Digest &digest, bool handedOut) {
  grpc::ClientContext context;
  v1::ReadRequest read;
  *read.mutable_digest() = digest;
  read.set_handed_out(handedOut);
  auto reader = blobs.Read(&context, read);
  std::string back;
  v1::ReadResponse chunk;
  while (reader->Read(&chunk))
    back += chunk.data();
  return reader->Finish().ok() ? back : std::string();
}

class TransitServerTest : public ServerTest {
protected:
  TransitServerTest() { transitMemoryBytes = 1 << 20; }
};

TEST_F(TransitServerTest, OnlyAClientsReadOfAnOutputHandedToItLetsItGo) {
  const std::string output(4096, 'o');
  v1::Digest digest = upload(output, 1 << 20, /*inTransit=*/true);
  ContentStore &store = server->contentStore();
  store.handOut(digest);
  // An agent's fetch (no handed_out), as of an output chained into the
  // next call: the client is still owed its read.
  EXPECT_EQ(readBlob(*blobs, digest, false), output);
  EXPECT_TRUE(store.contains(digest));
  // The client's last read: delivered, and gone from memory.
  EXPECT_EQ(readBlob(*blobs, digest, true), output);
  EXPECT_FALSE(store.contains(digest));
  EXPECT_EQ(store.transitStats().dropped, 1);
}

TEST_F(TransitServerTest, KilndNamesAnInTransitUploadSentWithoutItsHash) {
  // 900 KiB in three messages: hashed as they arrive, held in memory.
  const std::string bytes(900 << 10, 'n');
  ContentStore &store = server->contentStore();
  v1::WriteResponse named;
  grpc::Status status = uploadUnnamed(bytes, bytes.size(), named);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(named.digest().hash(), digestOf(bytes).hash());
  EXPECT_EQ(named.digest().size_bytes(), int64_t{900} << 10);
  EXPECT_EQ(named.committed_size(), int64_t{900} << 10);
  EXPECT_EQ(store.transitStats().blobs, 1);
  EXPECT_EQ(readBlob(*blobs, named.digest(), false), bytes);
  // The same bytes again: the same name, still one blob in memory. Its
  // room was made before the name was known: the blob held, not yet
  // used, went to disk for it (the cost of not hashing on the client).
  v1::WriteResponse again;
  ASSERT_TRUE(uploadUnnamed(bytes, bytes.size(), again).ok());
  EXPECT_EQ(again.digest().hash(), named.digest().hash());
  EXPECT_EQ(store.transitStats().blobs, 1);
  EXPECT_EQ(store.transitStats().bytes, int64_t{900} << 10);
  EXPECT_EQ(store.transitStats().spilled, 1);
  EXPECT_EQ(readBlob(*blobs, again.digest(), false), bytes);
}

TEST_F(TransitServerTest, AnUnnamedUploadMustBeInTransitAndItsDeclaredSize) {
  ContentStore &store = server->contentStore();
  v1::WriteResponse response;
  // Durable blobs are named by their uploader.
  grpc::Status durable =
      uploadUnnamed("abc", 3, response, /*inTransit=*/false);
  EXPECT_EQ(durable.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(durable.error_message().find("hash"), std::string::npos)
      << durable.error_message();
  grpc::Status longer = uploadUnnamed(std::string(400 << 10, 'l'), 1000, response);
  EXPECT_EQ(longer.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(longer.error_message().find("an unnamed upload of 1000 bytes is "
                                        "longer than its digest says"),
            std::string::npos)
      << longer.error_message();
  grpc::Status shorter = uploadUnnamed(std::string(999, 's'), 1000, response);
  EXPECT_EQ(shorter.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(shorter.error_message().find("an unnamed upload of 1000 bytes has "
                                         "999 bytes"),
            std::string::npos)
      << shorter.error_message();
  grpc::Status negative = uploadUnnamed("", -1, response);
  EXPECT_EQ(negative.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // Nothing was held, and the room reserved for them is free again.
  EXPECT_EQ(store.transitStats().blobs, 0);
  v1::WriteResponse fits;
  EXPECT_TRUE(uploadUnnamed(std::string(1 << 20, 'f'), 1 << 20, fits).ok());
}

TEST_F(TransitServerTest, KilndNamesOnlyWhatItCanHoldInMemory) {
  // Past the 1 MiB tier: refused before a byte is taken, for the client to
  // send it by its digest (which goes to disk).
  const std::string bytes((1 << 20) + 1, 'b');
  v1::WriteResponse response;
  grpc::Status refused = uploadUnnamed(bytes, bytes.size(), response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("1048577 bytes are more than it holds"),
            std::string::npos)
      << refused.error_message();
  EXPECT_NE(refused.error_message().find("--transit-memory-bytes 1048576"),
            std::string::npos);
  EXPECT_FALSE(server->contentStore().contains(digestOf(bytes)));
  EXPECT_EQ(upload(bytes, 1 << 20, /*inTransit=*/true).hash(),
            digestOf(bytes).hash());
}

TEST_F(TransitServerTest, KilndNamesNothingWhilePinnedBlobsFillItsMemory) {
  ContentStore &store = server->contentStore();
  v1::Digest held = upload(std::string(900 << 10, 'p'), 1 << 20, true);
  BlobPins pins = store.pin({held});
  v1::WriteResponse response;
  grpc::Status refused = uploadUnnamed(std::string(200 << 10, 'q'), 200 << 10, response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("no room for 204800 bytes now"),
            std::string::npos)
      << refused.error_message();
  EXPECT_NE(refused.error_message().find("upload the blob by its digest"),
            std::string::npos);
}

TEST_F(ServerTest, WithoutAMemoryTierKilndNamesNoUpload) {
  v1::WriteResponse response;
  grpc::Status refused = uploadUnnamed("abc", 3, response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("--transit-memory-bytes 0"),
            std::string::npos)
      << refused.error_message();
}

TEST_F(TransitServerTest, AnInputIsSpentOnceItsExecuteRanAndDroppedForRoom) {
  v1::Digest w;
  v1::ExecuteRequest request = linearExecuteRequest(w);
  GrpcFakeAgent agent(channel, "fake");
  *request.add_parameters() = w;
  v1::Tensor *x = request.mutable_inputs(0);
  *x->mutable_blob() =
      upload(std::string(2 * 16 * 4, '\7'), 1 << 20, /*inTransit=*/true);
  auto execute = [&] {
    grpc::ClientContext context;
    v1::ExecuteResponse response;
    return executor->Execute(&context, request, &response);
  };
  ASSERT_TRUE(execute().ok());
  ContentStore &store = server->contentStore();
  // Kept for a client that sends it again by digest...
  EXPECT_TRUE(store.contains(x->blob()));
  ASSERT_TRUE(execute().ok());
  // ...until room is needed: dropped, not written to disk.
  upload(std::string(1 << 20, 'f'), 1 << 20, /*inTransit=*/true);
  EXPECT_FALSE(store.contains(x->blob()));
  EXPECT_EQ(store.transitStats().dropped, 1);
  EXPECT_EQ(store.transitStats().spilled, 0);
  // Sent again by digest, it is named as missing, for the client to upload.
  grpc::Status gone = execute();
  EXPECT_EQ(gone.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(gone.error_message().find(x->blob().hash()), std::string::npos)
      << gone.error_message();
  EXPECT_EQ(agent.tasksSeen.load(), 2);
}

TEST_F(ServerTest, ABlobOverTheCapIsRefusedBeforeAnythingIsWritten) {
  // The declared size alone decides: no byte of the 17 MiB is sent.
  v1::Digest huge;
  huge.set_hash(digestOf("x").hash());
  huge.set_size_bytes(int64_t{17} << 20);
  grpc::ClientContext context;
  v1::WriteResponse response;
  auto writer = blobs->Write(&context, &response);
  v1::WriteRequest first;
  *first.mutable_digest() = huge;
  first.set_data("x");
  writer->Write(first);
  writer->WritesDone();
  grpc::Status status = writer->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(status.error_message().find("--max-blob-bytes"), std::string::npos)
      << status.error_message();
  EXPECT_FALSE(server->contentStore().contains(huge));
  // Within the cap, writes work as before.
  EXPECT_EQ(upload(std::string(1 << 20, 'c')).size_bytes(), 1 << 20);
}

TEST_F(ServerTest, BlobWriteRejectsMismatchAndOutOfOrderChunks) {
  grpc::ClientContext context;
  v1::WriteResponse response;
  auto writer = blobs->Write(&context, &response);
  v1::WriteRequest request;
  *request.mutable_digest() = digestOf("expected");
  request.set_offset(3); // not where the blob starts
  request.set_data("expected");
  request.set_finish_write(true);
  writer->Write(request);
  writer->WritesDone();
  grpc::Status status = writer->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("offset"), std::string::npos);
}

TEST_F(ServerTest, CompileChecksTargetAndParameters) {
  v1::CompileResponse response;
  grpc::Status unknownTarget =
      compile(linearGraph(2, 16, 4, digestOf(weights)), response, "tpu");
  EXPECT_EQ(unknownTarget.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(unknownTarget.error_message().find("'tpu'"), std::string::npos);

  grpc::Status missing = compile(linearGraph(2, 16, 4, digestOf(weights)),
                                 response);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(missing.error_message().find(digestOf(weights).hash()),
            std::string::npos);
  EXPECT_EQ(fake.calls.load(), 0);
}

TEST_F(ServerTest, CompileThenExecute) {
  v1::Digest w = upload(weights);
  v1::CompileResponse compiled;
  grpc::Status status = compile(linearGraph(2, 16, 4, w), compiled);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(compiled.cache_hit());
  EXPECT_EQ(compiled.compile_key().size(), 64u);
  v1::CompileResponse again;
  ASSERT_TRUE(compile(linearGraph(2, 16, 4, w), again).ok());
  EXPECT_TRUE(again.cache_hit());
  EXPECT_EQ(again.executable().hash(), compiled.executable().hash());

  GrpcFakeAgent agent(channel, "fake");
  grpc::ClientContext listContext;
  v1::ListDevicesRequest list;
  list.set_kind("cpu");
  v1::ListDevicesResponse listed;
  ASSERT_TRUE(devices->ListDevices(&listContext, list, &listed).ok());
  ASSERT_EQ(listed.devices_size(), 1);
  EXPECT_EQ(listed.devices(0).id(), "fake/0");

  v1::ExecuteRequest request;
  *request.mutable_executable() = compiled.executable();
  *request.add_parameters() = w;
  v1::Tensor *x = request.add_inputs();
  *x->mutable_type() = f32({2, 16});
  x->set_data(std::string(2 * 16 * 4, '\0'));
  grpc::ClientContext executeContext;
  v1::ExecuteResponse response;
  status = executor->Execute(&executeContext, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.device_id(), "fake/0");
  ASSERT_EQ(response.outputs_size(), 1);
  EXPECT_EQ(response.outputs(0).data().size(), 2u * 4 * 4);
  EXPECT_EQ(response.timings().run_us(), 7);
  EXPECT_GT(response.timings().total_us(), 0);
  EXPECT_EQ(agent.tasksSeen.load(), 1);
  EXPECT_EQ(agent.tasksSigned.load(), 1)
      << "the task does not carry kilnd's signature";

  // A wrong input shape is named precisely.
  *x->mutable_type() = f32({3, 16});
  // The message ends with the request id the client sent.
  grpc::ClientContext badContext;
  badContext.AddMetadata("kiln-request-id", "bad-shape-1");
  status = executor->Execute(&badContext, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "input 0 ('x'): expected f32[2, 16], got f32[3, 16] "
            "(request bad-shape-1)");
  // Short inline data.
  *x->mutable_type() = f32({2, 16});
  x->set_data("abc");
  grpc::ClientContext shortContext;
  status = executor->Execute(&shortContext, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ServerTest, AnAgentOfAnotherProtocolVersionIsRefusedNamingBoth) {
  for (uint32_t version : {0u, kAgentProtocolVersion + 1}) {
    std::unique_ptr<v1::Agent::Stub> stub = v1::Agent::NewStub(channel);
    grpc::ClientContext context;
    auto stream = stub->Connect(&context);
    v1::AgentMessage hello;
    hello.mutable_register_()->set_agent_id("old");
    hello.mutable_register_()->set_protocol_version(version);
    hello.mutable_register_()->add_devices()->set_kind("cpu");
    ASSERT_TRUE(stream->Write(hello));
    v1::DaemonMessage reply;
    EXPECT_FALSE(stream->Read(&reply));
    grpc::Status status = stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(status.error_message().find(
                  absl::StrCat("protocol ", version)),
              std::string::npos)
        << status.error_message();
    EXPECT_NE(status.error_message().find(
                  absl::StrCat("speaks protocol ", kAgentProtocolVersion)),
              std::string::npos)
        << status.error_message();
  }
  EXPECT_TRUE(server->deviceRegistry().listDevices("").empty());
}

TEST(ServerKeyTest, AGivenTaskKeyIsUsedAndItsPublicHalfPublished) {
  TempDir keys, cache;
  std::filesystem::path keyPath = keys.path() / "task-signing-key.pem";
  absl::StatusOr<TaskSigningKey> key = TaskSigningKey::loadOrCreate(keyPath);
  ASSERT_TRUE(key.ok()) << key.status();
  FakeCompiler fake;
  ServerOptions options;
  options.listenAddress = "127.0.0.1:0";
  options.cacheDir = cache.path(); // fresh: no keys/ folder in it
  options.taskSigningKey = keyPath;
  options.compiler = fake.function();
  options.compilerBuildId = "test-build";
  absl::StatusOr<std::unique_ptr<KilnServer>> server =
      KilnServer::start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ(testing::readFile(taskPublicKeyPath(cache.path())),
            key->publicKeyPem());
  EXPECT_FALSE(std::filesystem::exists(cache.path() / "keys" /
                                       "task-signing-key.pem"))
      << "the given key is used, no other is made";
  (*server)->shutdown(std::chrono::milliseconds(0));
}

TEST_F(ServerTest, ExecuteErrors) {
  v1::Digest w = upload(weights);
  v1::CompileResponse compiled;
  ASSERT_TRUE(compile(linearGraph(2, 16, 4, w), compiled).ok());
  v1::ExecuteRequest request;
  *request.mutable_executable() = digestOf("no such executable");
  grpc::ClientContext unknownContext;
  v1::ExecuteResponse response;
  grpc::Status status = executor->Execute(&unknownContext, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(status.error_message().find(digestOf("no such executable").hash()),
            std::string::npos);

  *request.mutable_executable() = compiled.executable();
  grpc::ClientContext countContext;
  status = executor->Execute(&countContext, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  *request.add_parameters() = digestOf(std::string(weights.size(), '\2'));
  v1::Tensor *x = request.add_inputs();
  *x->mutable_type() = f32({2, 16});
  x->set_data(std::string(2 * 16 * 4, '\0'));
  grpc::ClientContext missingContext;
  status = executor->Execute(&missingContext, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);

  *request.mutable_parameters(0) = digestOf("wrong size");
  grpc::ClientContext sizeContext;
  status = executor->Execute(&sizeContext, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  // Valid request, but no agent has ever served cpu and the startup grace
  // (the device wait) is over: UNAVAILABLE at once, naming the kinds there are.
  *request.mutable_parameters(0) = w;
  grpc::ClientContext noDeviceContext;
  status = executor->Execute(&noDeviceContext, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  // With no kiln-request-id metadata kilnd makes a 32-hex-digit id.
  std::string message = status.error_message();
  ASSERT_TRUE(message.starts_with(
      "no agent serving device kind 'cpu' has connected to this kilnd (kinds "
      "it has: none) (request "))
      << message;
  EXPECT_EQ(message.size(), message.find("(request ") + 9 + 32 + 1) << message;
  // kilnd's own UNAVAILABLE tells clients' retry policies not to repeat it.
  const auto &trailers = noDeviceContext.GetServerTrailingMetadata();
  auto pushback = trailers.find("grpc-retry-pushback-ms");
  ASSERT_NE(pushback, trailers.end());
  EXPECT_EQ(std::string(pushback->second.data(), pushback->second.size()), "-1");
}

TEST_F(ServerTest, AParameterSetNamesTheParametersInOneDigest) {
  v1::Digest w;
  v1::ExecuteRequest request = linearExecuteRequest(w);
  GrpcFakeAgent agent(channel, "fake");
  request.mutable_inputs(0)->set_data(std::string(2 * 16 * 4, '\0'));
  auto execute = [&](const v1::ExecuteRequest &r) {
    grpc::ClientContext context;
    v1::ExecuteResponse response;
    return executor->Execute(&context, r, &response);
  };

  // Not uploaded yet.
  v1::ParameterSet set;
  *set.add_parameters() = w;
  std::string setBytes = set.SerializeAsString();
  *request.mutable_parameter_set() = digestOf(setBytes);
  // FAILED_PRECONDITION naming the set: what makes a client upload it.
  auto expectSetMissing = [&] {
    grpc::Status missing = execute(request);
    EXPECT_EQ(missing.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(missing.error_message().find("parameter_set sha256:" +
                                           digestOf(setBytes).hash()),
              std::string::npos)
        << missing.error_message();
  };
  expectSetMissing();

  // Uploaded: it runs, and the agent gets the set's digest, not a list.
  upload(setBytes);
  grpc::Status status = execute(request);
  ASSERT_TRUE(status.ok()) << status.error_message();
  {
    std::lock_guard<std::mutex> lock(agent.seenMutex);
    EXPECT_EQ(agent.lastParameterSet, digestOf(setBytes).hash());
    EXPECT_EQ(agent.lastParameters, 0);
  }

  // Evicted from the store after kilnd parsed it: still reported missing
  // (an agent that never had it could not fetch it).
  server->contentStore().collectGarbage(1);
  expectSetMissing();
  upload(weights);
  upload(setBytes);

  // Both a list and a set: refused.
  v1::ExecuteRequest both = request;
  *both.add_parameters() = w;
  status = execute(both);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("not both"), std::string::npos);

  // A set of the wrong length, or with a parameter of the wrong size, is
  // checked against the manifest like a list.
  v1::ParameterSet twice = set;
  *twice.add_parameters() = w;
  *request.mutable_parameter_set() = upload(twice.SerializeAsString());
  status = execute(request);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("takes 1 parameters, got 2"),
            std::string::npos)
      << status.error_message();
  v1::ParameterSet wrongSize;
  *wrongSize.add_parameters() = digestOf("short");
  *request.mutable_parameter_set() = upload(wrongSize.SerializeAsString());
  status = execute(request);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("parameter 0"), std::string::npos);

  // A blob that is not a ParameterSet.
  *request.mutable_parameter_set() = upload(std::string("\x0d\x01", 2));
  status = execute(request);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(agent.tasksSeen.load(), 1) << "no bad set reaches an agent";
}

TEST_F(ServerTest, AgentDisconnectRemovesItsDevices) {
  {
    GrpcFakeAgent agent(channel, "short-lived");
    EXPECT_EQ(server->deviceRegistry().listDevices("").size(), 1u);
  }
  EXPECT_TRUE(testing::eventually(
      [&] { return server->deviceRegistry().listDevices("").empty(); }));
}

} // namespace
} // namespace kiln::server
