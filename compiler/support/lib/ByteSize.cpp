//===- ByteSize.cpp - parse sizes such as "20GiB" -------------------------===//
//
// This file implements parseByteSize.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/ByteSize.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include <limits>
#include <map>
#include <string>

namespace kiln {

absl::StatusOr<int64_t> parseByteSize(std::string_view textView) {
  absl::string_view text(textView.data(), textView.size());
  size_t unitStart = 0;
  while (unitStart < text.size() && absl::ascii_isdigit(text[unitStart]))
    ++unitStart;
  static const std::map<std::string, int> shifts = {
      {"", 0},   {"b", 0},    {"k", 10},  {"kib", 10}, {"kb", 10},
      {"m", 20}, {"mib", 20}, {"mb", 20}, {"g", 30},   {"gib", 30},
      {"gb", 30}, {"t", 40},  {"tib", 40}, {"tb", 40}};
  auto shift = shifts.find(absl::AsciiStrToLower(text.substr(unitStart)));
  int64_t value = 0;
  if (unitStart == 0 || shift == shifts.end() ||
      !absl::SimpleAtoi(text.substr(0, unitStart), &value))
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a byte size (e.g. 20GiB, 512MiB)"));
  if (value > (std::numeric_limits<int64_t>::max() >> shift->second))
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is too large"));
  return value << shift->second;
}

} // namespace kiln
