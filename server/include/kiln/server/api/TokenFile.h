//===- TokenFile.h - kilnd's bearer tokens file ----------------*- C++ -*-===//
//
// This file declares the parser of `--auth-tokens`: one grant per line,
// `<name> <role> sha256:<hex>`, so the file (a Kubernetes Secret) never holds
// a usable token.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/api/AccessPolicy.h"

#include "absl/status/statusor.h"

#include <filesystem>
#include <string_view>
#include <vector>

namespace kiln::server {

/// The grants in `text`: lines `<name> <role> sha256:<64 hex digits>`, role
/// user, admin or agent; blank lines and `#` comments are skipped.
/// INVALID_ARGUMENT naming `source`:line for a malformed line or a
/// repeated name or hash.
absl::StatusOr<std::vector<TokenGrant>> parseTokenFile(std::string_view text,
                                                       std::string_view source);

/// parseTokenFile over the file at `path`.
absl::StatusOr<std::vector<TokenGrant>>
readTokenFile(const std::filesystem::path &path);

} // namespace kiln::server
