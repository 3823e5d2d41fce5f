//===- ParameterSetCache.cpp - the parameter sets Execute names -----------===//
//
// This file implements ParameterSetCache over ContentStore::read.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/ParameterSetCache.h"

#include "kiln/common/Digest.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

namespace kiln::server {

ParameterSetCache::ParameterSetCache(const ContentStore &store, size_t capacity)
    : store(store), sets(store, capacity) {}

absl::StatusOr<std::shared_ptr<const v1::ParameterSet>>
ParameterSetCache::get(const v1::Digest &digest) {
  RETURN_IF_ERROR(annotate(validateDigest(digest), "parameter_set"));
  return sets.get(digest, [this](const v1::Digest &digest)
                              -> absl::StatusOr<
                                  std::shared_ptr<const v1::ParameterSet>> {
    std::string where = absl::StrCat("parameter_set ", formatDigest(digest));
    if (digest.size_bytes() > kMaxParameterSetBytes)
      return absl::InvalidArgumentError(
          absl::StrCat(where, " is ", digest.size_bytes(),
                       " bytes; a set holds at most ", kMaxParameterSetBytes));
    ASSIGN_OR_RETURN(std::string bytes, store.read(digest));
    auto set = std::make_shared<v1::ParameterSet>();
    if (!set->ParseFromString(bytes))
      return absl::InvalidArgumentError(
          absl::StrCat(where, " is not a serialized kiln.v1.ParameterSet"));
    for (int i = 0; i < set->parameters_size(); ++i)
      RETURN_IF_ERROR(annotate(validateDigest(set->parameters(i)),
                               absl::StrCat(where, ": parameter ", i)));
    return set;
  });
}

} // namespace kiln::server
