//===- TensorTypes.cpp - element sizes and type checks --------------------===//
//
// This file implements the kiln.v1.TensorType helpers.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/TensorTypes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <cctype>
#include <limits>

namespace kiln {

int64_t elementSize(v1::DType dtype) {
  switch (dtype) {
  case v1::DTYPE_C128:
    return 16;
  case v1::DTYPE_C64:
  case v1::DTYPE_F64:
  case v1::DTYPE_I64:
    return 8;
  case v1::DTYPE_F32:
  case v1::DTYPE_I32:
    return 4;
  case v1::DTYPE_F16:
  case v1::DTYPE_BF16:
  case v1::DTYPE_I16:
    return 2;
  case v1::DTYPE_I8:
  case v1::DTYPE_U8:
  case v1::DTYPE_BOOL:
    return 1;
  default:
    return 0;
  }
}

int64_t elementCount(const v1::TensorType &type) {
  int64_t count = 1;
  for (int64_t extent : type.shape())
    count *= extent;
  return count;
}

absl::StatusOr<int64_t> byteSize(const v1::TensorType &type) {
  int64_t size = elementSize(type.dtype());
  if (size == 0)
    return absl::InvalidArgumentError(
        absl::StrCat("tensor type has no valid dtype (", type.dtype(), ")"));
  for (int64_t extent : type.shape()) {
    if (extent < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("tensor type ", formatType(type),
                       " has a negative extent"));
    if (extent != 0 && size > std::numeric_limits<int64_t>::max() / extent)
      return absl::InvalidArgumentError(
          absl::StrCat("tensor type ", formatType(type), " is too large"));
    size *= extent;
  }
  return size;
}

std::string formatType(const v1::TensorType &type) {
  std::string name = v1::DType_Name(type.dtype());
  if (name.rfind("DTYPE_", 0) == 0)
    name = name.substr(6);
  for (char &c : name)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::vector<std::string> extents;
  for (int i = 0; i < type.shape_size(); ++i)
    extents.push_back(i < type.symbols_size() && !type.symbols(i).empty()
                          ? type.symbols(i)
                          : absl::StrCat(type.shape(i)));
  return absl::StrCat(name, "[", absl::StrJoin(extents, ", "), "]");
}

bool sameType(const v1::TensorType &a, const v1::TensorType &b) {
  if (a.dtype() != b.dtype() || a.shape_size() != b.shape_size() ||
      a.symbols_size() != b.symbols_size())
    return false;
  for (int i = 0; i < a.symbols_size(); ++i)
    if (a.symbols(i) != b.symbols(i))
      return false;
  for (int i = 0; i < a.shape_size(); ++i)
    if (a.shape(i) != b.shape(i))
      return false;
  return true;
}

absl::StatusOr<std::vector<bool>>
keptOutputMask(const google::protobuf::RepeatedField<uint32_t> &keep, int outputs) {
  std::vector<bool> kept(outputs, false);
  for (uint32_t index : keep) {
    if (index >= static_cast<uint32_t>(outputs))
      return absl::InvalidArgumentError(absl::StrCat(
          "keep_outputs names output ", index, "; the executable has ", outputs));
    if (kept[index])
      return absl::InvalidArgumentError(
          absl::StrCat("keep_outputs names output ", index, " twice"));
    kept[index] = true;
  }
  return kept;
}

} // namespace kiln
