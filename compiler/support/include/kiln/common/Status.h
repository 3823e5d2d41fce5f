//===- Status.h - absl::Status helpers shared by daemon and agents --------===//
//
// This file declares the RETURN_IF_ERROR / ASSIGN_OR_RETURN macros Kiln's C++
// runtime code uses. Errors are returned, never thrown.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#define KILN_STATUS_CONCAT_INNER(a, b) a##b
#define KILN_STATUS_CONCAT(a, b) KILN_STATUS_CONCAT_INNER(a, b)

/// Returns from the enclosing function when `expr` yields a non-OK status.
#define RETURN_IF_ERROR(expr)                                                  \
  do {                                                                         \
    ::absl::Status kiln_status_ = (expr);                                      \
    if (!kiln_status_.ok())                                                    \
      return kiln_status_;                                                     \
  } while (false)

#define KILN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                             \
  auto tmp = (expr);                                                           \
  if (!tmp.ok())                                                               \
    return tmp.status();                                                       \
  lhs = std::move(*tmp)

/// `ASSIGN_OR_RETURN(auto x, makeX());` binds the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr)                                            \
  KILN_ASSIGN_OR_RETURN_IMPL(KILN_STATUS_CONCAT(kiln_statusor_, __LINE__),     \
                             lhs, expr)

namespace kiln {

/// Prefixes `status`'s message with `context` ("parameter 3: ..."), keeping
/// its code; OK stays OK.
inline absl::Status annotate(const absl::Status &status,
                             absl::string_view context) {
  if (status.ok())
    return status;
  return absl::Status(status.code(),
                      absl::StrCat(context, ": ", status.message()));
}

} // namespace kiln
