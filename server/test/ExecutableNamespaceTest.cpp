//===- ExecutableNamespaceTest.cpp - the executables kilnd made -----------===//
//
// This file tests that ExecutableNamespace lists exactly what was added
// (hash and size), survives reopening, and refuses invalid digests.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/ExecutableNamespace.h"

#include "TestUtil.h"
#include "kiln/common/Digest.h"

#include <gtest/gtest.h>

namespace kiln::server {
namespace {

using testing::TempDir;

TEST(ExecutableNamespaceTest, ListsWhatWasAddedByHashAndSize) {
  TempDir temp;
  auto names = ExecutableNamespace::open(temp.path() / "executables");
  ASSERT_TRUE(names.ok()) << names.status();
  v1::Digest made = digestOf("a record kilnd compiled");
  v1::Digest uploaded = digestOf("a record a client made up");
  EXPECT_FALSE((*names)->contains(made));
  ASSERT_TRUE((*names)->add(made).ok());
  ASSERT_TRUE((*names)->add(made).ok()) << "adding twice is harmless";
  EXPECT_TRUE((*names)->contains(made));
  EXPECT_FALSE((*names)->contains(uploaded));
  v1::Digest wrongSize = made;
  wrongSize.set_size_bytes(made.size_bytes() + 1);
  EXPECT_FALSE((*names)->contains(wrongSize));

  auto reopened = ExecutableNamespace::open(temp.path() / "executables");
  ASSERT_TRUE(reopened.ok());
  EXPECT_TRUE((*reopened)->contains(made));
  EXPECT_FALSE((*reopened)->contains(uploaded));
}

TEST(ExecutableNamespaceTest, InvalidDigestsAreNeitherAddedNorFound) {
  TempDir temp;
  auto names = ExecutableNamespace::open(temp.path() / "executables");
  ASSERT_TRUE(names.ok());
  v1::Digest bad;
  bad.set_hash("../../etc/passwd");
  bad.set_size_bytes(1);
  EXPECT_EQ((*names)->add(bad).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE((*names)->contains(bad));
}

} // namespace
} // namespace kiln::server
