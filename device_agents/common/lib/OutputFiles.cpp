//===- OutputFiles.cpp - a result's output memfds, sealed for the caller --===//
//
// This file implements sealOutputFiles.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/OutputFiles.h"

#include "kiln/common/SealedFile.h"

#include "absl/strings/str_cat.h"

namespace kiln::agent {

void sealOutputFiles(const LocalFiles &files, v1::TaskResult &result,
                     google::protobuf::RepeatedField<uint32_t> &indices,
                     std::vector<int> &fds) {
  for (const auto &[index, fd] : files.outputs) {
    if (absl::Status sealed = sealTensorFile(fd.get()); !sealed.ok()) {
      result.clear_outputs();
      result.set_code(static_cast<int32_t>(absl::StatusCode::kInternal));
      result.set_message(
          absl::StrCat("output ", index, ": ", sealed.message()));
      indices.Clear();
      fds.clear();
      return;
    }
    indices.Add(static_cast<uint32_t>(index));
    fds.push_back(fd.get());
  }
}

} // namespace kiln::agent
