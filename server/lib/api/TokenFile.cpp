//===- TokenFile.cpp - kilnd's bearer tokens file -------------------------===//
//
// This file implements parsing the tokens file into TokenGrants.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/TokenFile.h"

#include "kiln/common/AtomicFile.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kiln::server {
namespace {

bool validName(absl::string_view name) {
  if (name.empty() || name.size() > 128)
    return false;
  for (char c : name)
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.' &&
        c != '@')
      return false;
  return true;
}

bool validSha256(absl::string_view hex) {
  if (hex.size() != 64)
    return false;
  for (char c : hex)
    if (!absl::ascii_isdigit(c) && (c < 'a' || c > 'f'))
      return false;
  return true;
}

} // namespace

absl::StatusOr<std::vector<TokenGrant>>
parseTokenFile(std::string_view textView, std::string_view sourceView) {
  absl::string_view text(textView.data(), textView.size());
  std::string source(sourceView);
  std::vector<TokenGrant> grants;
  absl::flat_hash_set<std::string> names, hashes;
  int lineNumber = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++lineNumber;
    if (size_t hash = line.find('#'); hash != absl::string_view::npos)
      line = line.substr(0, hash);
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (fields.empty())
      continue;
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", lineNumber, ": ", why,
                       " (lines are '<name> <role> sha256:<hex>'; "
                       "`kiln token new` writes one)"));
    };
    if (fields.size() != 3)
      return bad(absl::StrCat("expected 3 fields, found ", fields.size()));
    TokenGrant grant;
    if (!validName(fields[0]))
      return bad(absl::StrCat("'", fields[0],
                              "' is not a name (1-128 of [A-Za-z0-9._@-])"));
    grant.name = std::string(fields[0]);
    if (fields[1] == "user")
      grant.role = Role::User;
    else if (fields[1] == "admin")
      grant.role = Role::Admin;
    else if (fields[1] == "agent")
      grant.role = Role::Agent;
    else
      return bad(absl::StrCat("'", fields[1],
                              "' is not a role (user, admin or agent)"));
    if (!absl::StartsWith(fields[2], "sha256:") ||
        !validSha256(fields[2].substr(7)))
      return bad("the token must be given as sha256:<64 lowercase hex "
                 "digits> (its hash, never the token itself)");
    grant.sha256 = std::string(fields[2].substr(7));
    if (!names.insert(grant.name).second)
      return bad(absl::StrCat("the name '", grant.name, "' is used twice"));
    if (!hashes.insert(grant.sha256).second)
      return bad("this token hash is already granted on an earlier line");
    grants.push_back(std::move(grant));
  }
  return grants;
}

absl::StatusOr<std::vector<TokenGrant>>
readTokenFile(const std::filesystem::path &path) {
  absl::StatusOr<std::string> text = readFlagFile(path, "--auth-tokens");
  if (!text.ok())
    return text.status();
  return parseTokenFile(*text, path.string());
}

} // namespace kiln::server
