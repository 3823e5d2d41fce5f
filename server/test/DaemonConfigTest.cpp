//===- DaemonConfigTest.cpp - kilnd's flags, environment and YAML ---------===//
//
// This file implements tests for the precedence of kilnd's setting sources
// (flags > environment > YAML file > defaults) and their error messages.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/daemon/DaemonFlags.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <fstream>

namespace kiln::server {
namespace {

using testing::TempDir;

class DaemonConfigTest : public ::testing::Test {
protected:
  std::string writeConfig(const std::string &text) {
    std::string path = (temp.path() / "kilnd.yaml").string();
    std::ofstream(path) << text;
    return path;
  }

  TempDir temp;
};

TEST_F(DaemonConfigTest, FlagsBeatEnvironmentBeatsYamlBeatsDefaults) {
  std::string config = writeConfig("listen: 127.0.0.1:1\n"
                                   "cache_dir: /from/yaml\n"
                                   "heartbeat_ms: 400\n"
                                   "local_agents: [cpu, qemu]\n");
  Environment env = {{"KILN_LISTEN", "127.0.0.1:2"},
                     {"KILN_CACHE_DIR", "/from/env"},
                     {"KILN_BUILD_DIR", "not-a-setting"}};
  absl::StatusOr<DaemonFlags> flags = parseDaemonFlags(
      {"--config", config, "--listen=127.0.0.1:3"}, env);
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->listen, "127.0.0.1:3");    // flag
  EXPECT_EQ(flags->cacheDir, "/from/env");    // environment
  EXPECT_EQ(flags->heartbeatMs, 400);         // YAML
  EXPECT_EQ(flags->localAgents, "cpu,qemu");  // YAML list
  EXPECT_EQ(flags->executeTimeoutS, 300);     // default
  EXPECT_EQ(flags->drainTimeoutS, 30);        // default
  EXPECT_EQ(flags->configFile, config);
}

TEST_F(DaemonConfigTest, ConfigFileCanComeFromTheEnvironment) {
  std::string config = writeConfig("drain_timeout_s: 5\n"
                                   "cache_capacity_bytes: 512MiB\n");
  absl::StatusOr<DaemonFlags> flags =
      parseDaemonFlags({}, {{"KILN_CONFIG", config}});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->drainTimeoutS, 5);
  EXPECT_EQ(flags->cacheCapacityBytes, int64_t{512} << 20);
}

TEST_F(DaemonConfigTest, EveryDefaultWorksWithNoFileAndNoEnvironment) {
  absl::StatusOr<DaemonFlags> flags = parseDaemonFlags({}, {});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->cacheCapacityBytes, int64_t{20} << 30);
  EXPECT_EQ(flags->cacheSalt, "");
  EXPECT_EQ(flags->configFile, "");
}

TEST_F(DaemonConfigTest, UnknownYamlKeyNamesFileLineAndKey) {
  std::string config = writeConfig("listen: 127.0.0.1:0\ncache_dri: /x\n");
  absl::StatusOr<DaemonFlags> flags = parseDaemonFlags({"--config", config}, {});
  EXPECT_EQ(flags.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(flags.status().message().find(config + ":2: key 'cache_dri' is "
                                                   "unknown"),
            std::string::npos)
      << flags.status();
}

TEST_F(DaemonConfigTest, BadYamlValueNamesFileLineAndKey) {
  std::string config = writeConfig("\n\ncompile_workers: lots\n");
  absl::StatusOr<DaemonFlags> flags = parseDaemonFlags({"--config", config}, {});
  EXPECT_EQ(flags.status().message(),
            config + ":3: key 'compile_workers': needs an integer >= 1, got "
                     "'lots'");
}

TEST_F(DaemonConfigTest, MalformedYamlAndNestedValuesAreClearErrors) {
  std::string config = writeConfig("listen: [unclosed\n");
  absl::StatusOr<DaemonFlags> flags = parseDaemonFlags({"--config", config}, {});
  EXPECT_EQ(flags.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(flags.status().message().find("not valid YAML"), std::string::npos)
      << flags.status();
  config = writeConfig("listen:\n  host: x\n");
  flags = parseDaemonFlags({"--config", config}, {});
  EXPECT_NE(flags.status().message().find("key 'listen'"), std::string::npos)
      << flags.status();
  config = writeConfig("- a\n- b\n");
  flags = parseDaemonFlags({"--config", config}, {});
  EXPECT_NE(flags.status().message().find("must be a mapping"),
            std::string::npos)
      << flags.status();
  flags = parseDaemonFlags({"--config", (temp.path() / "absent").string()}, {});
  EXPECT_NE(flags.status().message().find("cannot read config file"),
            std::string::npos)
      << flags.status();
}

TEST_F(DaemonConfigTest, BadEnvironmentValueNamesTheVariable) {
  absl::StatusOr<DaemonFlags> flags =
      parseDaemonFlags({}, {{"KILN_CACHE_CAPACITY_BYTES", "huge"}});
  EXPECT_EQ(flags.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(flags.status().message().find(
                "environment variable KILN_CACHE_CAPACITY_BYTES: needs a "
                "byte size"),
            std::string::npos)
      << flags.status();
  // A bad environment value is an error even when a flag overrides it: the
  // operator should hear about it.
  flags = parseDaemonFlags({"--drain-timeout-s=1"},
                           {{"KILN_DRAIN_TIMEOUT_S", "-1"}});
  EXPECT_FALSE(flags.ok());
}

TEST_F(DaemonConfigTest, HelpNamesFlagEnvironmentVariableAndYamlKey) {
  std::string help = daemonFlagsHelp();
  for (const char *text :
       {"--cache-dir  [env KILN_CACHE_DIR, yaml cache_dir]",
        "--drain-timeout-s  [env KILN_DRAIN_TIMEOUT_S, yaml drain_timeout_s] "
        "(default: 30)",
        "--cache-capacity-bytes", "(default: 20GiB)", "--cache-salt",
        "--config FILE  [env KILN_CONFIG]"})
    EXPECT_NE(help.find(text), std::string::npos) << text << "\n" << help;
}

} // namespace
} // namespace kiln::server
