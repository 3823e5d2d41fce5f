//===- RemoteCache.cpp - the shared cache tier on REAPI v2 ----------------===//
//
// This file implements RemoteCache: the ActionCache, ContentAddressableStorage
// and ByteStream calls of kilnd's shared tier, digest checks on every read,
// and RemoteHealth, the backoff that keeps a dead remote off the request
// path.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/RemoteCache.h"

#include "kiln/common/AtomicFile.h"
#include "kiln/common/Credentials.h"
#include "kiln/common/Digest.h"
#include "kiln/common/Status.h"
#include "kiln/server/store/ContentStore.h"

#include "build/bazel/remote/execution/v2/remote_execution.grpc.pb.h"
#include "google/bytestream/bytestream.grpc.pb.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <spdlog/spdlog.h>

#include <algorithm>

namespace kiln::server {

namespace reapi = build::bazel::remote::execution::v2;
namespace bytestream = google::bytestream;

namespace {

/// What one BatchUpdateBlobs/BatchReadBlobs may carry: under gRPC's default
/// 4 MiB message limit, which every REAPI server accepts, with room for the
/// request's own fields.
constexpr int64_t kBatchBytes = (4 << 20) - (64 << 10);
/// ByteStream chunk size.
constexpr int64_t kChunkBytes = 1 << 20;

absl::Status fromGrpc(const grpc::Status &status) {
  if (status.ok())
    return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

absl::Status fromRpcStatus(const google::rpc::Status &status) {
  return absl::Status(static_cast<absl::StatusCode>(status.code()),
                      status.message());
}

reapi::Digest toRemote(const v1::Digest &digest) {
  reapi::Digest out;
  out.set_hash(digest.hash());
  out.set_size_bytes(digest.size_bytes());
  return out;
}

v1::Digest fromRemote(const reapi::Digest &digest) {
  v1::Digest out;
  out.set_hash(digest.hash());
  out.set_size_bytes(digest.size_bytes());
  return out;
}

reapi::Digest remoteDigestOf(const google::protobuf::MessageLite &message) {
  std::string bytes;
  message.SerializeToString(&bytes);
  return toRemote(digestOf(bytes));
}

/// The Action "VERB KEY": kiln-compile for entries, kiln-compile-lease for
/// leases.
reapi::Digest actionDigest(const std::string &compileKey,
                           const char *verb = "kiln-compile") {
  reapi::Command command;
  command.add_arguments(verb);
  command.add_arguments(compileKey);
  reapi::Action action;
  *action.mutable_command_digest() = remoteDigestOf(command);
  *action.mutable_input_root_digest() = remoteDigestOf(reapi::Directory());
  return remoteDigestOf(action);
}

/// A deadline of `timeout`, plus a second per 32 MiB for large transfers.
std::chrono::system_clock::time_point deadlineFor(std::chrono::milliseconds timeout,
                                                  int64_t bytes = 0) {
  return std::chrono::system_clock::now() + timeout +
         std::chrono::seconds(bytes >> 25);
}

std::string randomUuid() {
  absl::StatusOr<std::string> hex = randomHex(16);
  std::string h = hex.ok() ? *hex : std::string(32, '0');
  h[12] = '4'; // version 4
  return absl::StrCat(h.substr(0, 8), "-", h.substr(8, 4), "-", h.substr(12, 4),
                      "-", h.substr(16, 4), "-", h.substr(20));
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
remoteCredentials(const RemoteCacheOptions &options, bool tls) {
  if (options.tlsCert.empty() != options.tlsKey.empty())
    return absl::InvalidArgumentError(
        "--remote-tls-cert and --remote-tls-key go together: give both or neither");
  if (!tls) {
    if (!options.tlsCa.empty() || !options.tlsCert.empty())
      return absl::InvalidArgumentError(
          "--remote-tls-* options need a grpcs:// --remote-cache URL");
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions ssl;
  if (!options.tlsCa.empty()) {
    ASSIGN_OR_RETURN(ssl.pem_root_certs, readFlagFile(options.tlsCa, "--remote-tls-ca"));
  }
  if (!options.tlsCert.empty()) {
    ASSIGN_OR_RETURN(ssl.pem_cert_chain,
                     readFlagFile(options.tlsCert, "--remote-tls-cert"));
    ASSIGN_OR_RETURN(ssl.pem_private_key,
                     readFlagFile(options.tlsKey, "--remote-tls-key"));
  }
  return grpc::SslCredentials(ssl);
}

} // namespace

std::string remoteActionHash(const std::string &compileKey) {
  return actionDigest(compileKey).hash();
}

// --- RemoteHealth ------------------------------------------------------------

bool RemoteHealth::mayCall() const {
  std::lock_guard<std::mutex> lock(mutex);
  return isUp || Clock::now() >= retryAt;
}

bool RemoteHealth::tryCall() {
  std::lock_guard<std::mutex> lock(mutex);
  if (isUp)
    return true;
  auto now = Clock::now();
  if (now < retryAt)
    return false;
  retryAt = now + backoff; // the others wait for this probe's outcome
  return true;
}

bool RemoteHealth::up() const {
  std::lock_guard<std::mutex> lock(mutex);
  return isUp;
}

void RemoteHealth::succeeded() {
  std::lock_guard<std::mutex> lock(mutex);
  if (!isUp)
    spdlog::info("remote cache: reachable again; using the shared tier");
  isUp = true;
  backoff = std::chrono::milliseconds(0);
}

void RemoteHealth::failed(const absl::Status &why) {
  std::lock_guard<std::mutex> lock(mutex);
  backoff = backoff.count() == 0 ? minBackoff : std::min(backoff * 2, maxBackoff);
  retryAt = Clock::now() + backoff;
  if (isUp)
    spdlog::warn("remote cache: unavailable ({}); serving from the local tier "
                 "only, retrying in {} ms",
                 why.ToString(), backoff.count());
  isUp = false;
}

// --- RemoteCache ---------------------------------------------------------------

struct RemoteCache::Stubs {
  std::unique_ptr<reapi::ActionCache::Stub> actions;
  std::unique_ptr<reapi::ContentAddressableStorage::Stub> cas;
  std::unique_ptr<bytestream::ByteStream::Stub> bytes;
};

absl::StatusOr<std::unique_ptr<RemoteCache>>
RemoteCache::connect(const RemoteCacheOptions &options) {
  absl::string_view url = options.url;
  bool tls = false;
  if (absl::ConsumePrefix(&url, "grpcs://"))
    tls = true;
  else if (!absl::ConsumePrefix(&url, "grpc://"))
    return absl::InvalidArgumentError(absl::StrCat(
        "--remote-cache: '", options.url,
        "' is not grpc://HOST:PORT or grpcs://HOST:PORT"));
  if (url.empty() || url.find('/') != absl::string_view::npos)
    return absl::InvalidArgumentError(absl::StrCat(
        "--remote-cache: '", options.url, "' names no HOST:PORT"));
  if (options.timeout.count() <= 0)
    return absl::InvalidArgumentError("--remote-timeout must be positive");
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials,
                   remoteCredentials(options, tls));
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 << 20);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
              static_cast<int>(options.maxBackoff.count()));
  auto channel = grpc::CreateCustomChannel(std::string(url), credentials, args);
  return std::unique_ptr<RemoteCache>(new RemoteCache(options, std::move(channel)));
}

RemoteCache::RemoteCache(RemoteCacheOptions options,
                         std::shared_ptr<grpc::Channel> channel)
    : options(std::move(options)), channel(std::move(channel)),
      stubs(std::make_unique<Stubs>()),
      health(this->options.minBackoff, this->options.maxBackoff),
      maxBatchBytes(kBatchBytes) {
  stubs->actions = reapi::ActionCache::NewStub(this->channel);
  stubs->cas = reapi::ContentAddressableStorage::NewStub(this->channel);
  stubs->bytes = bytestream::ByteStream::NewStub(this->channel);
}

RemoteCache::~RemoteCache() = default;

template <typename Fn>
absl::Status RemoteCache::guarded(const char *what, Fn &&call) {
  if (!health.tryCall())
    return absl::UnavailableError("remote cache is down (backing off)");
  absl::Status status = call();
  switch (status.code()) {
  case absl::StatusCode::kOk:
  case absl::StatusCode::kNotFound:
    health.succeeded();
    break;
  case absl::StatusCode::kDataLoss:
    // The server answered; its bytes were wrong. Not an outage.
    health.succeeded();
    errors.fetch_add(1);
    break;
  default:
    errors.fetch_add(1);
    health.failed(absl::Status(status.code(), absl::StrCat(what, ": ", status.message())));
    break;
  }
  return status;
}

absl::StatusOr<std::optional<RemoteOutputs>>
RemoteCache::getAction(const std::string &key) {
  reapi::ActionResult result;
  absl::Status status = guarded("GetActionResult", [&] {
    grpc::ClientContext context;
    context.set_deadline(deadlineFor(options.timeout));
    reapi::GetActionResultRequest request;
    request.set_instance_name(options.instanceName);
    *request.mutable_action_digest() = actionDigest(key);
    return fromGrpc(stubs->actions->GetActionResult(&context, request, &result));
  });
  if (absl::IsNotFound(status)) {
    misses.fetch_add(1);
    return std::nullopt;
  }
  RETURN_IF_ERROR(status);
  RemoteOutputs outputs;
  for (const reapi::OutputFile &file : result.output_files()) {
    v1::Digest digest = fromRemote(file.digest());
    if (!validateDigest(digest).ok())
      return absl::DataLossError(absl::StrCat(
          "remote action cache entry for ", key, " names a malformed digest"));
    outputs[file.path()] = digest;
  }
  hits.fetch_add(1);
  return outputs;
}

absl::Status RemoteCache::putAction(const std::string &key,
                                    const RemoteOutputs &outputs) {
  return guarded("UpdateActionResult", [&] {
    grpc::ClientContext context;
    context.set_deadline(deadlineFor(options.timeout));
    reapi::UpdateActionResultRequest request;
    request.set_instance_name(options.instanceName);
    *request.mutable_action_digest() = actionDigest(key);
    for (const auto &[path, digest] : outputs) {
      reapi::OutputFile *file = request.mutable_action_result()->add_output_files();
      file->set_path(path);
      *file->mutable_digest() = toRemote(digest);
    }
    reapi::ActionResult stored;
    absl::Status status =
        fromGrpc(stubs->actions->UpdateActionResult(&context, request, &stored));
    if (status.ok())
      actionsWritten.fetch_add(1);
    return status;
  });
}

absl::StatusOr<std::optional<RemoteLease>>
RemoteCache::getLease(const std::string &key) {
  reapi::ActionResult result;
  absl::Status status = guarded("GetActionResult (lease)", [&] {
    grpc::ClientContext context;
    context.set_deadline(deadlineFor(options.timeout));
    reapi::GetActionResultRequest request;
    request.set_instance_name(options.instanceName);
    *request.mutable_action_digest() = actionDigest(key, "kiln-compile-lease");
    return fromGrpc(stubs->actions->GetActionResult(&context, request, &result));
  });
  if (absl::IsNotFound(status))
    return std::nullopt;
  RETURN_IF_ERROR(status);
  const reapi::ExecutedActionMetadata &metadata = result.execution_metadata();
  RemoteLease lease;
  lease.holder = metadata.worker();
  lease.expires = std::chrono::system_clock::time_point(
      std::chrono::seconds(metadata.worker_completed_timestamp().seconds()) +
      std::chrono::nanoseconds(metadata.worker_completed_timestamp().nanos()));
  return lease;
}

absl::Status RemoteCache::putLease(const std::string &key, const RemoteLease &lease) {
  return guarded("UpdateActionResult (lease)", [&] {
    grpc::ClientContext context;
    context.set_deadline(deadlineFor(options.timeout));
    reapi::UpdateActionResultRequest request;
    request.set_instance_name(options.instanceName);
    *request.mutable_action_digest() = actionDigest(key, "kiln-compile-lease");
    reapi::ExecutedActionMetadata *metadata =
        request.mutable_action_result()->mutable_execution_metadata();
    metadata->set_worker(lease.holder);
    auto since = lease.expires.time_since_epoch();
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since);
    metadata->mutable_worker_completed_timestamp()->set_seconds(seconds.count());
    metadata->mutable_worker_completed_timestamp()->set_nanos(static_cast<int32_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(since - seconds).count()));
    reapi::ActionResult stored;
    return fromGrpc(stubs->actions->UpdateActionResult(&context, request, &stored));
  });
}

absl::StatusOr<std::string> RemoteCache::readBlob(const v1::Digest &digest) {
  RETURN_IF_ERROR(validateDigest(digest));
  if (options.maxBlobBytes > 0 && digest.size_bytes() > options.maxBlobBytes) {
    corrupt.fetch_add(1);
    return absl::DataLossError(absl::StrCat(
        "the remote names blob ", formatDigest(digest), " of ", digest.size_bytes(),
        " bytes, over this kilnd's --max-blob-bytes (", options.maxBlobBytes, ")"));
  }
  std::string bytes;
  if (digest.size_bytes() > maxBatchBytes) {
    ASSIGN_OR_RETURN(bytes, readByteStream(digest));
  } else {
    RETURN_IF_ERROR(guarded("BatchReadBlobs", [&] {
      grpc::ClientContext context;
      context.set_deadline(deadlineFor(options.timeout, digest.size_bytes()));
      reapi::BatchReadBlobsRequest request;
      request.set_instance_name(options.instanceName);
      *request.add_digests() = toRemote(digest);
      reapi::BatchReadBlobsResponse response;
      RETURN_IF_ERROR(fromGrpc(stubs->cas->BatchReadBlobs(&context, request, &response)));
      if (response.responses_size() != 1)
        return absl::InternalError(absl::StrCat(
            "BatchReadBlobs answered ", response.responses_size(), " blobs for 1"));
      const auto &one = response.responses(0);
      RETURN_IF_ERROR(fromRpcStatus(one.status()));
      bytes = one.data();
      return absl::OkStatus();
    }));
  }
  DigestVerifier verifier(digest);
  absl::Status intact = verifier.update(bytes);
  if (intact.ok())
    intact = verifier.finish();
  if (!intact.ok()) {
    corrupt.fetch_add(1);
    return absl::DataLossError(absl::StrCat("remote blob ", formatDigest(digest),
                                            " does not match its digest: ",
                                            intact.message()));
  }
  bytesRead.fetch_add(bytes.size());
  return bytes;
}

absl::StatusOr<std::string> RemoteCache::readByteStream(const v1::Digest &digest) {
  std::string bytes;
  RETURN_IF_ERROR(guarded("ByteStream.Read", [&] {
    grpc::ClientContext context;
    context.set_deadline(deadlineFor(options.timeout, digest.size_bytes()));
    bytestream::ReadRequest request;
    request.set_resource_name(absl::StrCat(
        options.instanceName.empty() ? "" : options.instanceName + "/", "blobs/",
        digest.hash(), "/", digest.size_bytes()));
    auto reader = stubs->bytes->Read(&context, request);
    bytestream::ReadResponse chunk;
    bytes.reserve(static_cast<size_t>(std::min<int64_t>(digest.size_bytes(), kChunkBytes * 64)));
    while (reader->Read(&chunk)) {
      if (static_cast<int64_t>(bytes.size() + chunk.data().size()) > digest.size_bytes()) {
        context.TryCancel();
        reader->Finish();
        return absl::DataLossError("ByteStream.Read sent more bytes than the digest's size");
      }
      bytes += chunk.data();
    }
    return fromGrpc(reader->Finish());
  }));
  return bytes;
}

absl::StatusOr<std::vector<v1::Digest>>
RemoteCache::findMissing(const std::vector<v1::Digest> &digests) {
  if (digests.empty())
    return std::vector<v1::Digest>();
  reapi::FindMissingBlobsResponse missing;
  RETURN_IF_ERROR(guarded("FindMissingBlobs", [&] {
    grpc::ClientContext context;
    context.set_deadline(deadlineFor(options.timeout));
    reapi::FindMissingBlobsRequest request;
    request.set_instance_name(options.instanceName);
    for (const v1::Digest &digest : digests)
      *request.add_blob_digests() = toRemote(digest);
    return fromGrpc(stubs->cas->FindMissingBlobs(&context, request, &missing));
  }));
  std::vector<v1::Digest> out;
  for (const reapi::Digest &digest : missing.missing_blob_digests())
    out.push_back(fromRemote(digest));
  return out;
}

absl::Status RemoteCache::writeBlobs(
    const std::vector<std::pair<v1::Digest, std::string>> &blobs) {
  if (blobs.empty())
    return absl::OkStatus();
  std::vector<v1::Digest> digests;
  for (const auto &[digest, bytes] : blobs)
    digests.push_back(digest);
  ASSIGN_OR_RETURN(std::vector<v1::Digest> missing, findMissing(digests));
  std::vector<std::pair<v1::Digest, std::string>> toSend;
  for (const v1::Digest &digest : missing)
    for (const auto &blob : blobs)
      if (blob.first.hash() == digest.hash()) {
        toSend.push_back(blob);
        break;
      }
  return uploadBlobs(toSend);
}

absl::Status RemoteCache::uploadBlobs(
    const std::vector<std::pair<v1::Digest, std::string>> &toSend) {
  reapi::BatchUpdateBlobsRequest batch;
  int64_t batchBytes = 0;
  auto flush = [&]() -> absl::Status {
    if (batch.requests_size() == 0)
      return absl::OkStatus();
    absl::Status status = guarded("BatchUpdateBlobs", [&] {
      grpc::ClientContext context;
      context.set_deadline(deadlineFor(options.timeout, batchBytes));
      batch.set_instance_name(options.instanceName);
      reapi::BatchUpdateBlobsResponse response;
      RETURN_IF_ERROR(fromGrpc(stubs->cas->BatchUpdateBlobs(&context, batch, &response)));
      for (const auto &one : response.responses())
        if (one.status().code() != 0)
          return absl::Status(
              static_cast<absl::StatusCode>(one.status().code()),
              absl::StrCat("BatchUpdateBlobs refused ", one.digest().hash(), ": ",
                           one.status().message()));
      return absl::OkStatus();
    });
    if (status.ok())
      bytesWritten.fetch_add(batchBytes);
    batch.Clear();
    batchBytes = 0;
    return status;
  };
  for (const auto &[digest, bytes] : toSend) {
    if (digest.size_bytes() > maxBatchBytes) {
      RETURN_IF_ERROR(writeByteStream(digest, bytes));
      continue;
    }
    if (batchBytes + digest.size_bytes() > maxBatchBytes)
      RETURN_IF_ERROR(flush());
    auto *request = batch.add_requests();
    *request->mutable_digest() = toRemote(digest);
    request->set_data(bytes);
    batchBytes += digest.size_bytes();
  }
  return flush();
}

absl::Status RemoteCache::writeByteStream(const v1::Digest &digest,
                                          const std::string &bytes) {
  absl::Status status = guarded("ByteStream.Write", [&] {
    grpc::ClientContext context;
    context.set_deadline(deadlineFor(options.timeout, digest.size_bytes()));
    bytestream::WriteResponse response;
    auto writer = stubs->bytes->Write(&context, &response);
    std::string resource = absl::StrCat(
        options.instanceName.empty() ? "" : options.instanceName + "/", "uploads/",
        randomUuid(), "/blobs/", digest.hash(), "/", digest.size_bytes());
    int64_t offset = 0;
    const int64_t size = static_cast<int64_t>(bytes.size());
    do {
      int64_t n = std::min(kChunkBytes, size - offset);
      bytestream::WriteRequest request;
      if (offset == 0)
        request.set_resource_name(resource);
      request.set_write_offset(offset);
      request.set_data(bytes.data() + offset, static_cast<size_t>(n));
      offset += n;
      request.set_finish_write(offset == size);
      // The server may end the stream early when it already has the blob.
      if (!writer->Write(request))
        break;
    } while (offset < size);
    writer->WritesDone();
    RETURN_IF_ERROR(fromGrpc(writer->Finish()));
    if (response.committed_size() != size)
      return absl::DataLossError(absl::StrCat(
          "ByteStream.Write committed ", response.committed_size(), " of ", size,
          " bytes of ", digest.hash()));
    return absl::OkStatus();
  });
  if (status.ok())
    bytesWritten.fetch_add(bytes.size());
  return status;
}

std::vector<v1::Digest> fillFromRemote(ContentStore &store, RemoteCache &remote,
                                       const std::vector<v1::Digest> &wanted) {
  absl::StatusOr<std::vector<v1::Digest>> absent = remote.findMissing(wanted);
  if (!absent.ok())
    return wanted;
  std::vector<v1::Digest> missing;
  for (const v1::Digest &digest : wanted) {
    bool remoteLacks = std::any_of(absent->begin(), absent->end(),
                                   [&](const v1::Digest &a) { return a.hash() == digest.hash(); });
    if (remoteLacks) {
      missing.push_back(digest);
      continue;
    }
    absl::StatusOr<std::string> bytes = remote.readBlob(digest);
    absl::Status stored = bytes.ok() ? store.write(digest, *bytes) : bytes.status();
    if (!stored.ok()) {
      if (!absl::IsUnavailable(stored))
        spdlog::warn("remote cache: cannot copy blob {} from the shared tier: {}",
                     formatDigest(digest), stored.ToString());
      missing.push_back(digest);
    }
  }
  return missing;
}

void publishToRemote(ContentStore &store, RemoteCache &remote,
                     const std::vector<v1::Digest> &digests) {
  absl::StatusOr<std::vector<v1::Digest>> absent = remote.findMissing(digests);
  if (!absent.ok())
    return;
  for (const v1::Digest &digest : *absent) {
    absl::StatusOr<std::string> bytes = store.read(digest);
    // findMissing said so: no second FindMissingBlobs per blob.
    absl::Status sent = bytes.ok() ? remote.uploadBlobs({{digest, *std::move(bytes)}})
                                   : bytes.status();
    if (!sent.ok()) {
      spdlog::warn("remote cache: cannot share blob {}: {}", formatDigest(digest),
                   sent.ToString());
      if (absl::IsUnavailable(sent))
        return;
    }
  }
}

RemoteCache::Stats RemoteCache::stats() const {
  return Stats{hits.load(), misses.load(), errors.load(), bytesRead.load(),
               bytesWritten.load(), actionsWritten.load(), corrupt.load()};
}

} // namespace kiln::server
