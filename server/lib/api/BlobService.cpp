//===- BlobService.cpp - kiln.v1.Blobs over the content store -------------===//
//
// This file implements BlobService: request validation and chunking; the
// store does the hashing and atomic publication.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/BlobService.h"

#include "kiln/common/Digest.h"
#include "kiln/common/Status.h"
#include "kiln/server/api/GrpcStatus.h"
#include "kiln/server/api/RequestScope.h"

#include "absl/strings/str_cat.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

namespace kiln::server {

BlobService::BlobService(ContentStore &store, ServerMetrics &metrics,
                         const AccessPolicy &access, int64_t maxBlobBytes,
                         int64_t quotaBytes)
    : store(store), metrics(metrics), access(access),
      maxBlobBytes(maxBlobBytes), quota(store, quotaBytes) {}

grpc::Status BlobService::FindMissing(grpc::ServerContext *context,
                                      const v1::FindMissingRequest *request,
                                      v1::FindMissingResponse *response) {
  RequestScope scope(*context, "kiln.v1.Blobs/FindMissing", &metrics);
  if (grpc::Status denied = access.admit(*context, "kiln.v1.Blobs/FindMissing"); !denied.ok())
    return denied;
  std::vector<v1::Digest> asked(request->digests().begin(),
                                request->digests().end());
  for (const v1::Digest &digest : asked)
    if (absl::Status status = validateDigest(digest); !status.ok())
      return toGrpcStatus(status, scope.id());
  std::vector<v1::Digest> missing = store.findMissing(asked);
  if (remote && !missing.empty() && remote->mayCall())
    missing = fillFromRemote(store, *remote, missing);
  for (v1::Digest &digest : missing)
    *response->add_missing_digests() = std::move(digest);
  return grpc::Status::OK;
}

absl::Status BlobService::write(grpc::ServerReader<v1::WriteRequest> *reader,
                                v1::WriteResponse *response,
                                const Principal &caller) {
  v1::WriteRequest chunk;
  if (!reader->Read(&chunk))
    return absl::InvalidArgumentError("Blobs.Write stream carried no message");
  if (!chunk.has_digest())
    return absl::InvalidArgumentError(
        "the first Blobs.Write message must carry the digest");
  // In transit without a hash: kilnd hashes the bytes and names the blob.
  const bool naming = chunk.digest().hash().empty();
  if (naming && !chunk.in_transit())
    return absl::InvalidArgumentError(
        "the first Blobs.Write message must carry the digest's hash: only "
        "an in-transit upload may leave it to kilnd");
  const std::string name = describeBlob(chunk.digest());
  if (maxBlobBytes > 0 && chunk.digest().size_bytes() > maxBlobBytes)
    return absl::ResourceExhaustedError(absl::StrCat(
        name, " is ", chunk.digest().size_bytes(),
        " bytes; this kilnd takes blobs of at most ", maxBlobBytes,
        " bytes (--max-blob-bytes)"));
  // A blob already stored costs its uploader nothing (one kilnd names is
  // admitted by its size, and charged only if it was new).
  bool counted = caller.proof != Proof::None && caller.role == Role::User &&
                 (naming || !store.contains(chunk.digest()));
  if (counted)
    RETURN_IF_ERROR(quota.admit(caller.name, chunk.digest()));
  ASSIGN_OR_RETURN(std::unique_ptr<BlobWriter> writer,
                   naming ? store.beginNamingWrite(chunk.digest().size_bytes())
                          : store.beginWrite(chunk.digest(),
                                             chunk.in_transit()
                                                 ? Durability::kInTransit
                                                 : Durability::kDurable));
  while (true) {
    if (static_cast<int64_t>(chunk.data().size()) > kBlobChunkBytes)
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": chunk at offset ", chunk.offset(),
                       " has ", chunk.data().size(),
                       " bytes; chunks are at most 1 MiB"));
    if (chunk.offset() != writer->bytesWritten())
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": chunk offset ", chunk.offset(),
                       " but ", writer->bytesWritten(),
                       " bytes were written so far (chunks must be in order)"));
    RETURN_IF_ERROR(writer->append(chunk.data()));
    metrics.blobBytesIn.labels().inc(static_cast<double>(chunk.data().size()));
    if (chunk.finish_write())
      break;
    if (!reader->Read(&chunk))
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": stream ended after ", writer->bytesWritten(),
          " bytes without finish_write"));
  }
  RETURN_IF_ERROR(writer->commit());
  if (counted && !writer->alreadyStored())
    quota.charge(caller.name, writer->digest());
  response->set_committed_size(writer->bytesWritten());
  *response->mutable_digest() = writer->digest();
  return absl::OkStatus();
}

grpc::Status BlobService::Write(grpc::ServerContext *context,
                                grpc::ServerReader<v1::WriteRequest> *reader,
                                v1::WriteResponse *response) {
  RequestScope scope(*context, "kiln.v1.Blobs/Write", &metrics);
  Principal caller;
  if (grpc::Status denied = access.admit(*context, "kiln.v1.Blobs/Write", &caller);
      !denied.ok())
    return denied;
  absl::Status status = write(reader, response, caller);
  if (!status.ok())
    spdlog::warn("Blobs.Write from {} failed: {}", context->peer(),
                 std::string(status.message()));
  return toGrpcStatus(status, scope.id());
}

absl::Status BlobService::read(const v1::ReadRequest &request,
                               grpc::ServerWriter<v1::ReadResponse> *writer) {
  // Streamed from disk as it is hashed: a 256 MiB blob never sits whole in
  // kilnd's memory. Damage found at the end fails the call (DATA_LOSS), and
  // the client, which checks the digest itself, discards what it got. An
  // in-transit blob held in memory is streamed from its sealed file.
  v1::ReadResponse response;
  std::optional<BlobPins> pins = store.pin({request.digest()});
  absl::Status streamed = store.stream(request.digest(), [&](std::string_view chunk) {
    for (size_t offset = 0; offset < chunk.size(); offset += kBlobChunkBytes) {
      size_t length = std::min(chunk.size() - offset,
                               static_cast<size_t>(kBlobChunkBytes));
      response.set_data(chunk.data() + offset, length);
      if (!writer->Write(response))
        return absl::CancelledError("client went away during Blobs.Read");
      metrics.blobBytesOut.labels().inc(static_cast<double>(length));
    }
    return absl::OkStatus();
  });
  // A client's last read of an output handed to it (handed_out): held in
  // memory and owed to no other client, it goes now unless something else
  // pins it (its pages are the next call's). kilnd cannot know that the
  // last chunks arrived: a client that loses them fails its call and runs
  // it again. Agents' reads leave it.
  pins.reset();
  if (streamed.ok() && request.handed_out())
    store.readOut(request.digest());
  return streamed;
}

grpc::Status BlobService::Read(grpc::ServerContext *context,
                               const v1::ReadRequest *request,
                               grpc::ServerWriter<v1::ReadResponse> *writer) {
  RequestScope scope(*context, "kiln.v1.Blobs/Read", &metrics);
  if (grpc::Status denied = access.admit(*context, "kiln.v1.Blobs/Read"); !denied.ok())
    return denied;
  absl::Status status = read(*request, writer);
  if (!status.ok() && status.code() != absl::StatusCode::kNotFound)
    spdlog::warn("Blobs.Read {} failed: {}", formatDigest(request->digest()),
                 std::string(status.message()));
  return toGrpcStatus(status, scope.id());
}

} // namespace kiln::server
