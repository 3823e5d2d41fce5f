//===- TorchScriptImportTest.cpp - running kiln-torchscript-import --------===//
//
// This file implements tests for importTorchScript against fake importer
// tools (shell scripts): the arguments it passes, the graph and weights it
// reads back, and how exit codes, crashes and timeouts become statuses.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/compile/TorchScriptImport.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <fstream>
#include <iterator>

namespace kiln::server {
namespace {

using testing::TempDir;

class TorchScriptImportTest : public testing::StoreTest {
protected:
  void SetUp() override {
    StoreTest::SetUp();
    module.set_data("archive bytes");
    v1::TensorType *input = module.add_inputs();
    input->set_dtype(v1::DTYPE_F32);
    input->add_shape(2);
    input->add_shape(3);
  }

  /// A fake importer: a shell script with `body` ($1 archive, $2 outdir,
  /// $3... input types).
  std::filesystem::path tool(const std::string &body) {
    std::filesystem::path path = temp.path() / "tool.sh";
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  }

  v1::TorchScriptModule module;
};

TEST_F(TorchScriptImportTest, ReadsTheGraphAndStoresTheWeights) {
  std::filesystem::path fake = tool(R"SH(
[ "$(cat "$1")" = "archive bytes" ] || exit 9
[ "$3" = "f32:2x3" ] || exit 8
printf 'abcd' > "$2/param_0.bin"
cat > "$2/graph.json" <<'JSON'
{"name":"M","inputs":[{"name":"x","type":{"dtype":"DTYPE_F32","shape":[2,3]}}],
 "parameters":[{"value":{"name":"w","type":{"dtype":"DTYPE_F32","shape":[1]}}}],
 "nodes":[{"op":"aten.mul.Tensor","arguments":[{"name":"self","value":"x"},
   {"name":"other","value":"w"}],"outputs":[{"name":"y","type":{"dtype":"DTYPE_F32","shape":[2,3]}}]}],
 "outputs":["y"]}
JSON)SH");
  absl::StatusOr<v1::Graph> graph = importTorchScript(module, *store, fake);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->name(), "M");
  ASSERT_EQ(graph->nodes_size(), 1);
  EXPECT_EQ(graph->nodes(0).op(), "aten.mul.Tensor");
  ASSERT_EQ(graph->parameters_size(), 1);
  const v1::Digest &digest = graph->parameters(0).digest();
  EXPECT_EQ(digest.size_bytes(), 4);
  absl::StatusOr<std::string> bytes = store->read(digest);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, "abcd");
}

TEST_F(TorchScriptImportTest, ReusesAConversionWhileItsWeightsAreStored) {
  std::filesystem::path counter = temp.path() / "runs";
  std::filesystem::path fake = tool(absl::StrCat(R"SH(
echo run >> )SH", counter.string(), R"SH(
printf 'wxyz' > "$2/param_0.bin"
echo '{"name":"cached","parameters":[{"value":{"name":"w","type":{"dtype":"DTYPE_F32","shape":[1]}}}]}' > "$2/graph.json")SH"));
  auto runs = [&] {
    std::ifstream in(counter);
    return std::count(std::istreambuf_iterator<char>(in),
                      std::istreambuf_iterator<char>(), '\n');
  };
  module.set_data("cached archive");
  ASSERT_TRUE(importTorchScript(module, *store, fake).ok());
  absl::StatusOr<v1::Graph> again = importTorchScript(module, *store, fake);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->name(), "cached");
  EXPECT_EQ(runs(), 1);
  module.mutable_inputs(0)->set_shape(0, 5); // other input types: converted anew
  ASSERT_TRUE(importTorchScript(module, *store, fake).ok());
  EXPECT_EQ(runs(), 2);
}

TEST_F(TorchScriptImportTest, MapsExitCodesToStatusesWithTheMessage) {
  absl::StatusOr<v1::Graph> invalid = importTorchScript(
      module, *store, tool("echo 'not a TorchScript archive' >&2; exit 2"));
  EXPECT_EQ(invalid.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(invalid.status().message(),
            "TorchScript import: not a TorchScript archive");
  absl::StatusOr<v1::Graph> unimplemented = importTorchScript(
      module, *store, tool("echo 'TorchScript node prim::If' >&2; exit 3"));
  EXPECT_EQ(unimplemented.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(unimplemented.status().message().find("prim::If"), std::string::npos);
  absl::StatusOr<v1::Graph> crashed =
      importTorchScript(module, *store, tool("kill -SEGV $$"));
  EXPECT_EQ(crashed.status().code(), absl::StatusCode::kInternal);
  absl::StatusOr<v1::Graph> garbled =
      importTorchScript(module, *store, tool("echo '{nope' > \"$2/graph.json\""));
  EXPECT_EQ(garbled.status().code(), absl::StatusCode::kInternal);
}

TEST_F(TorchScriptImportTest, KillsAToolThatRunsPastTheTimeout) {
  CompileLimits limits;
  limits.wallTimeout = std::chrono::seconds(1);
  absl::StatusOr<v1::Graph> graph =
      importTorchScript(module, *store, tool("exec sleep 30"), limits);
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(graph.status().message().find("--compile-timeout-s"),
            std::string::npos);
}

TEST_F(TorchScriptImportTest, RunsInTheCompileSandbox) {
  CompileLimits limits;
  limits.cpuSeconds = 9;
  limits.memoryBytes = int64_t{2} << 30;
  ::setenv("KILN_TEST_SECRET", "hunter2", 1);
  absl::StatusOr<v1::Graph> graph = importTorchScript(
      module, *store,
      tool("{ ulimit -t; ulimit -v; env; } >&2; exit 1"), limits);
  ::unsetenv("KILN_TEST_SECRET");
  ASSERT_FALSE(graph.ok());
  std::string message(graph.status().message());
  EXPECT_NE(message.find("9\n2097152\n"), std::string::npos) << message;
  EXPECT_EQ(message.find("hunter2"), std::string::npos) << message;
  EXPECT_EQ(importTorchScript(module, *store, tool("exit 4"), limits)
                .status()
                .code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(importTorchScript(module, *store, tool("kill -XCPU $$"), limits)
                .status()
                .code(),
            absl::StatusCode::kDeadlineExceeded);
}

TEST_F(TorchScriptImportTest, AMissingToolOrArchiveIsAnError) {
  EXPECT_EQ(importTorchScript(module, *store, temp.path() / "no-such-tool")
                .status()
                .code(),
            absl::StatusCode::kInternal);
  v1::TorchScriptModule empty;
  EXPECT_EQ(importTorchScript(empty, *store, tool("exit 0")).status().code(),
            absl::StatusCode::kInvalidArgument);
  v1::TorchScriptModule fromBlob;
  fromBlob.mutable_blob()->set_hash(std::string(64, 'a'));
  EXPECT_EQ(importTorchScript(fromBlob, *store, tool("exit 0")).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(TorchScriptImportTest, NamesTheTorchScriptValueOfAFailingNode) {
  v1::Graph graph;
  graph.add_nodes()->add_outputs()->set_name("x.1");
  graph.add_nodes()->add_outputs()->set_name("input.3");
  absl::Status named = nameTorchScriptValue(
      absl::InvalidArgumentError("node 1: unsupported op 'aten.lgamma.default'"),
      graph);
  EXPECT_EQ(named.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(named.message(), "node 1: unsupported op 'aten.lgamma.default' "
                             "[TorchScript value %input.3]");
  absl::Status placement = nameTorchScriptValue(
      absl::UnimplementedError("target 'cpu' cannot compile 2 of 2 nodes: node 0 "
                               "'x.1' (aten.erfinv.default): no; node 1 'input.3' "
                               "(aten.lgamma.default): no"),
      graph);
  EXPECT_THAT(std::string(placement.message()),
              ::testing::EndsWith("[TorchScript values %x.1, %input.3]"));
  for (const char *other : {"node 7: out of range", "node x: bad", "no node"})
    EXPECT_EQ(nameTorchScriptValue(absl::InternalError(other), graph).message(),
              other);
}

} // namespace
} // namespace kiln::server
