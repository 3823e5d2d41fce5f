//===- ByteSize.cpp - parse sizes such as "20GiB" -------------------------===//
//
// This file implements parseByteSize, exactly (no floating point): the
// digits of the number become an integer mantissa over a power of ten.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/ByteSize.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

#include <limits>
#include <map>
#include <string>

namespace kiln {

namespace {

absl::Status notASize(absl::string_view text) {
  return absl::InvalidArgumentError(absl::StrCat(
      "'", text, "' is not a byte size (examples: 1000000, 512M, 2GiB, 1.5GiB)"));
}

} // namespace

absl::StatusOr<int64_t> parseByteSize(std::string_view given) {
  const absl::string_view original(given.data(), given.size());
  absl::string_view text = absl::StripAsciiWhitespace(original);
  size_t at = 0;
  unsigned __int128 mantissa = 0, scale = 1;
  bool digits = false, point = false;
  // Far past int64, and low enough that mantissa times the largest unit
  // (10^12 < 2^40) cannot wrap 128 bits.
  const unsigned __int128 cap = static_cast<unsigned __int128>(1) << 80;
  for (; at < text.size(); ++at) {
    char c = text[at];
    if (absl::ascii_isdigit(c)) {
      digits = true;
      mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
      if (point)
        scale *= 10;
      if (mantissa > cap || scale > cap)
        return absl::InvalidArgumentError(absl::StrCat("'", original, "' is too large"));
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  // A fraction needs digits on both sides ("1.5", not "1." or ".5").
  if (!digits || (point && (scale == 1 || text[0] == '.')))
    return notASize(original);
  static const std::map<std::string, unsigned __int128> units = {
      {"", 1},
      {"b", 1},
      {"k", 1000},
      {"kb", 1000},
      {"m", 1000'000},
      {"mb", 1000'000},
      {"g", 1000'000'000},
      {"gb", 1000'000'000},
      {"t", 1000'000'000'000},
      {"tb", 1000'000'000'000},
      {"ki", 1ull << 10},
      {"kib", 1ull << 10},
      {"mi", 1ull << 20},
      {"mib", 1ull << 20},
      {"gi", 1ull << 30},
      {"gib", 1ull << 30},
      {"ti", 1ull << 40},
      {"tib", 1ull << 40}};
  std::string unit = absl::AsciiStrToLower(
      absl::StripAsciiWhitespace(text.substr(at)));
  auto multiplier = units.find(unit);
  if (multiplier == units.end())
    return notASize(original);
  unsigned __int128 scaled = mantissa * multiplier->second;
  if (scaled % scale != 0)
    return absl::InvalidArgumentError(
        absl::StrCat("'", original, "' is not a whole number of bytes"));
  unsigned __int128 bytes = scaled / scale;
  if (bytes > static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max()))
    return absl::InvalidArgumentError(absl::StrCat("'", original, "' is too large"));
  return static_cast<int64_t>(bytes);
}

} // namespace kiln
