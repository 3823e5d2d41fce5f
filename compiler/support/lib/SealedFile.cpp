//===- SealedFile.cpp - tensors in sealed memfds --------------------------===//
//
// This file implements the sealed tensor file check.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/SealedFile.h"

#include "absl/strings/str_cat.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln {

int requiredTensorFileSeals() {
  return F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK;
}

absl::Status checkSealedTensorFile(int fd, int64_t size) {
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))
    return absl::InvalidArgumentError(
        "the file passed for a tensor is not a regular file (pass a memfd)");
  int seals = ::fcntl(fd, F_GET_SEALS);
  int needed = requiredTensorFileSeals();
  if (seals < 0 || (seals & needed) != needed)
    return absl::InvalidArgumentError(
        "the file passed for a tensor is not a memfd sealed against writing, "
        "growing and shrinking (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK)");
  if (info.st_size != size)
    return absl::InvalidArgumentError(
        absl::StrCat("the file passed for a tensor of ", size, " bytes holds ",
                     static_cast<int64_t>(info.st_size)));
  int access = ::fcntl(fd, F_GETFL);
  if (access < 0 || (access & O_ACCMODE) == O_WRONLY)
    return absl::InvalidArgumentError(
        "the file passed for a tensor is not open for reading");
  // Every byte written: a file of holes would make its reader, not its
  // sender, pay for the memory when it maps the pages in.
  if (size > 0 && ::lseek(fd, 0, SEEK_HOLE) != size)
    return absl::InvalidArgumentError(
        "the file passed for a tensor has holes (write every byte before "
        "sealing it)");
  return absl::OkStatus();
}

absl::Status sealTensorFile(int fd) {
  if (::fcntl(fd, F_ADD_SEALS, requiredTensorFileSeals()) != 0)
    return absl::InternalError(
        absl::StrCat("cannot seal a tensor file: ", std::strerror(errno)));
  return absl::OkStatus();
}

} // namespace kiln
