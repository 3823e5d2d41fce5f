//===- BlobWriter.cpp - streaming writes into the content store -----------===//
//
// This file implements BlobWriter: an upload streams through a
// VerifiedFileWriter (or, in transit, a TransitDraft); bytes that do not
// match their digest are the client's error (INVALID_ARGUMENT), and a
// published blob is announced to the store.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/BlobWriter.h"

#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

namespace kiln::server {
namespace {

/// A mismatch found while verifying an upload is the uploader's fault.
absl::Status asUploadError(absl::Status status) {
  if (absl::IsDataLoss(status))
    return absl::InvalidArgumentError(
        absl::StrCat("digest mismatch: ", status.message()));
  return status;
}

} // namespace

BlobWriter::BlobWriter(v1::Digest expected,
                       std::unique_ptr<VerifiedFileWriter> file,
                       Durability durability)
    : expected(std::move(expected)), file(std::move(file)),
      durability(durability) {}

BlobWriter::BlobWriter(v1::Digest expected, std::unique_ptr<TransitDraft> draft,
                       Publish publish)
    : expected(std::move(expected)), draft(std::move(draft)),
      publish(std::move(publish)) {}

absl::Status BlobWriter::append(std::string_view bytes) {
  if (done)
    return absl::FailedPreconditionError("blob write already finished");
  absl::Status status = file ? file->append(bytes) : draft->append(bytes);
  done = !status.ok();
  return asUploadError(std::move(status));
}

absl::Status BlobWriter::commit() {
  if (done)
    return absl::FailedPreconditionError("blob write already finished");
  done = true;
  if (draft) {
    absl::StatusOr<UniqueFd> sealed = draft->finish();
    RETURN_IF_ERROR(asUploadError(sealed.status()));
    expected = draft->digest();
    ASSIGN_OR_RETURN(heldBefore, publish(expected, *std::move(sealed)));
  } else {
    RETURN_IF_ERROR(asUploadError(file->commit(durability)));
  }
  if (onCommit)
    onCommit();
  return absl::OkStatus();
}

} // namespace kiln::server
