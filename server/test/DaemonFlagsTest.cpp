//===- DaemonFlagsTest.cpp - kilnd's command line -------------------------===//
//
// This file implements tests for kilnd's settings parser and --help text.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/CompilerService.h"
#include "kiln/server/daemon/Daemon.h"
#include "kiln/server/daemon/DaemonFlags.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace kiln::server {
namespace {

absl::StatusOr<DaemonFlags> parse(std::vector<const char *> args) {
  args.insert(args.begin(), "kilnd");
  return parseDaemonFlags(static_cast<int>(args.size()), args.data());
}

TEST(DaemonFlagsTest, DefaultsNeedNoFlags) {
  absl::StatusOr<DaemonFlags> flags = parse({});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->listen, "127.0.0.1:50051");
  EXPECT_EQ(flags->localAgentKinds(), std::vector<std::string>{"cpu"});
  EXPECT_EQ(flags->heartbeatMs, 1000);
  EXPECT_EQ(flags->executeTimeoutS, 300);
  EXPECT_EQ(flags->deviceWaitS, 15);
  EXPECT_GE(flags->compileWorkers, 1u);
  EXPECT_NE(flags->cacheDir.find(".cache/kiln/daemon"), std::string::npos);
  EXPECT_FALSE(flags->agentBinDir.empty());
}

TEST(DaemonFlagsTest, ParsesBothForms) {
  absl::StatusOr<DaemonFlags> flags =
      parse({"--listen", "127.0.0.1:0", "--port-file=/tmp/p",
             "--local-agents=none", "--compile-workers", "3",
             "--heartbeat-ms=250", "--log-level", "debug"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->listen, "127.0.0.1:0");
  EXPECT_EQ(flags->portFile, "/tmp/p");
  EXPECT_TRUE(flags->localAgentKinds().empty());
  EXPECT_EQ(flags->compileWorkers, 3u);
  EXPECT_EQ(flags->heartbeatMs, 250);
  EXPECT_EQ(flags->logLevel, "debug");
}

TEST(DaemonFlagsTest, ARelativeCacheDirBecomesAbsolute) {
  // The compile worker runs in its own directory: a relative cache path made
  // every compile fail with "cannot read a CompileJob".
  absl::StatusOr<DaemonFlags> flags = parse({"--cache-dir", "some/./cache"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->cacheDir,
            (std::filesystem::current_path() / "some/cache").string());
}

TEST(DaemonFlagsTest, UnknownFlagFailsClearly) {
  absl::StatusOr<DaemonFlags> flags = parse({"--lisen", "x"});
  EXPECT_EQ(flags.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(flags.status().message(),
            "unknown flag '--lisen' (see kilnd --help)");
}

TEST(DaemonFlagsTest, BadValuesFail) {
  EXPECT_FALSE(parse({"--compile-workers=0"}).ok());
  EXPECT_FALSE(parse({"--execute-timeout-s=soon"}).ok());
  EXPECT_FALSE(parse({"--log-level=loud"}).ok());
  EXPECT_FALSE(parse({"--listen"}).ok());
  EXPECT_FALSE(parse({"positional"}).ok());
}

TEST(DaemonFlagsTest, TheLastOfARepeatedFlagCounts) {
  absl::StatusOr<DaemonFlags> flags =
      parse({"--listen=127.0.0.1:1", "--listen", "127.0.0.1:2"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->listen, "127.0.0.1:2");
}

TEST(DaemonFlagsTest, SwitchesStandAloneOrTakeAValue) {
  EXPECT_TRUE(parse({"--insecure"})->insecure);
  EXPECT_FALSE(parse({"--insecure=false"})->insecure);
  EXPECT_FALSE(parse({})->insecure);
  // --local-link is not a switch: it takes a value, also after a space.
  EXPECT_FALSE(parse({"--local-link", "false"})->localLink);
  EXPECT_TRUE(parse({"--local-link=yes"})->localLink);
  absl::StatusOr<DaemonFlags> bad = parse({"--local-link=maybe"});
  EXPECT_EQ(bad.status().message(),
            "--local-link: needs true or false, got 'maybe'");
  bad = parseDaemonFlags({}, {{"KILN_INSECURE", "sometimes"}});
  EXPECT_EQ(bad.status().message(),
            "environment variable KILN_INSECURE: needs true or false, got "
            "'sometimes'");
}

TEST(DaemonFlagsTest, ValuesAreCheckedWhereverTheyComeFrom) {
  EXPECT_EQ(parse({"--log-format=xml"}).status().message(),
            "--log-format: 'xml' is not one of text, json");
  EXPECT_EQ(parse({"--compile-memory-bytes=100MiB"}).status().message(),
            "--compile-memory-bytes: must be at least 256MiB (the compiler's "
            "libraries alone map more than 100MiB)");
  EXPECT_EQ(parse({"--max-blob-bytes=1GiB"})->maxBlobBytes, int64_t{1} << 30);
  EXPECT_EQ(parseDaemonFlags({}, {{"KILN_DEBUG_COMPILE_FAULT", "crash:"}})
                .status()
                .message(),
            "environment variable KILN_DEBUG_COMPILE_FAULT: 'crash:' is not "
            "crash:OP or oom:OP (e.g. crash:aten.gelu.default)");
  EXPECT_EQ(parse({"--port-file=/p", "--listen"}).status().message(),
            "flag '--listen' needs a value");
  EXPECT_EQ(parse({"stray"}).status().message(),
            "unexpected argument 'stray' (kilnd takes only --flags)");
  EXPECT_EQ(parse({"--lisen=x"}).status().message(),
            "unknown flag '--lisen' (see kilnd --help)");
}

TEST(DaemonFlagsTest, HelpListsEveryFlagWithItsDefault) {
  std::string help = daemonFlagsHelp();
  for (const char *flag :
       {"--listen", "--port-file", "--cache-dir", "--local-agents",
        "--agent-bin-dir", "--compile-workers", "--execute-timeout-s",
        "--device-wait-s", "--heartbeat-ms", "--log-level", "--help"})
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  EXPECT_NE(help.find("(default: 127.0.0.1:50051)"), std::string::npos);
  EXPECT_NE(help.find("(default: 1000)"), std::string::npos);
  EXPECT_TRUE(parse({"--help"})->help);
}

TEST(DaemonFlagsTest, DebugMiscompileIsOffByDefault) {
  absl::StatusOr<DaemonFlags> flags = parse({});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_TRUE(flags->debugMiscompileOps().empty());
  EXPECT_NE(daemonFlagsHelp().find("--debug-miscompile  [env "
                                   "KILN_DEBUG_MISCOMPILE"),
            std::string::npos);
}

TEST(DaemonFlagsTest, DebugMiscompileFromFlagOrEnvironment) {
  absl::StatusOr<DaemonFlags> flags = parse(
      {"--debug-miscompile=aten.gelu.default, aten.addmm.default"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->debugMiscompileOps(),
            (std::vector<std::string>{"aten.gelu.default", "aten.addmm.default"}));
  flags = parseDaemonFlags({}, {{"KILN_DEBUG_MISCOMPILE", "aten.mm.default"}});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->debugMiscompileOps(),
            std::vector<std::string>{"aten.mm.default"});
  absl::StatusOr<DaemonFlags> bad = parse({"--debug-miscompile=gelu"});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'gelu' is not an op overload name"),
            std::string::npos)
      << bad.status();
}

TEST(DaemonFlagsTest, DebugMiscompileReachesTheCompilerAndItsBuildId) {
  std::vector<std::string> seen;
  CompilerFn compiler = [&](const v1::Graph &,
                            const compiler::CompileOptions &options)
      -> absl::StatusOr<compiler::CompiledExecutable> {
    seen = options.debugMiscompileOps;
    return compiler::CompiledExecutable{};
  };
  ASSERT_TRUE(withDebugMiscompile(compiler, {})(v1::Graph(), {}).ok());
  EXPECT_TRUE(seen.empty());
  ASSERT_TRUE(
      withDebugMiscompile(compiler, {"aten.gelu.default"})(v1::Graph(), {}).ok());
  EXPECT_EQ(seen, std::vector<std::string>{"aten.gelu.default"});
  EXPECT_EQ(debugMiscompileBuildId("b1", {}), "b1");
  EXPECT_EQ(debugMiscompileBuildId("b1", {"aten.gelu.default"}),
            "b1+debug-miscompile=aten.gelu.default");
}

TEST(DaemonFlagsTest, LocalDialAddress) {
  EXPECT_EQ(localDialAddress("0.0.0.0:0", 4242), "127.0.0.1:4242");
  EXPECT_EQ(localDialAddress("127.0.0.1:0", 4242), "127.0.0.1:4242");
  EXPECT_EQ(localDialAddress("[::]:50051", 50051), "[::1]:50051");
  EXPECT_EQ(localDialAddress("10.0.0.5:7", 7), "10.0.0.5:7");
}

} // namespace
} // namespace kiln::server
