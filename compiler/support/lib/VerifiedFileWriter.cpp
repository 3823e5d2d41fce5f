//===- VerifiedFileWriter.cpp - write a blob, publish it if it matches ----===//
//
// This file implements VerifiedFileWriter.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/VerifiedFileWriter.h"

#include "kiln/common/Status.h"

namespace kiln {

absl::StatusOr<std::unique_ptr<VerifiedFileWriter>>
VerifiedFileWriter::create(v1::Digest digest, std::filesystem::path finalPath,
                           std::filesystem::path tempPath) {
  ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileWriter> file,
                   AtomicFileWriter::create(std::move(finalPath),
                                            std::move(tempPath)));
  return std::unique_ptr<VerifiedFileWriter>(
      new VerifiedFileWriter(std::move(digest), std::move(file)));
}

absl::Status VerifiedFileWriter::append(std::string_view bytes) {
  if (absl::Status status = verifier.update(bytes); !status.ok()) {
    file->discard();
    return status;
  }
  return file->append(bytes);
}

absl::Status VerifiedFileWriter::commit(Durability durability) {
  if (absl::Status status = verifier.finish(); !status.ok()) {
    file->discard();
    return status;
  }
  return file->commit(durability);
}

} // namespace kiln
