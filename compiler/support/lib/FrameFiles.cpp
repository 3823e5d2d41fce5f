//===- FrameFiles.cpp - a frame's tensor files, paired with their inputs --===//
//
// This file implements pairFrameFiles.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/FrameFiles.h"

#include "absl/strings/str_cat.h"

namespace kiln {

absl::StatusOr<IndexedFiles>
pairFrameFiles(const google::protobuf::RepeatedField<uint32_t> &indices,
               int inputs, std::vector<UniqueFd> &files) {
  if (indices.size() != static_cast<int>(files.size()))
    return absl::InvalidArgumentError(
        absl::StrCat("the frame names ", indices.size(),
                     " file inputs and carries ", files.size(), " files"));
  int64_t previous = -1;
  for (uint32_t index : indices) {
    if (index >= static_cast<uint32_t>(inputs) ||
        static_cast<int64_t>(index) <= previous)
      return absl::InvalidArgumentError(absl::StrCat(
          "file input ", index, ": file inputs name inputs of the call (",
          inputs, "), in ascending order, once each"));
    previous = index;
  }
  IndexedFiles paired;
  paired.reserve(files.size());
  for (int i = 0; i < indices.size(); ++i)
    paired.emplace_back(static_cast<int>(indices[i]), std::move(files[i]));
  return paired;
}

} // namespace kiln
