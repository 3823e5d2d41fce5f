//===- AccessPolicyTest.cpp - credentials, roles and the listen rule ------===//
//
// This file implements tests for the tokens file, the table of roles per RPC
// (checked against every RPC the kiln.v1 protos declare), the loopback rule
// for --listen and the --insecure switch.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/AccessPolicy.h"
#include "kiln/server/daemon/DaemonFlags.h"
#include "kiln/server/api/ServerTransport.h"
#include "kiln/server/api/TokenFile.h"

#include "kiln/v1/agent.grpc.pb.h"
#include "kiln/v1/blobs.grpc.pb.h"
#include "kiln/v1/cache.grpc.pb.h"
#include "kiln/v1/compiler.grpc.pb.h"
#include "kiln/v1/daemon.grpc.pb.h"
#include "kiln/v1/devices.grpc.pb.h"
#include "kiln/v1/executor.grpc.pb.h"

#include <gtest/gtest.h>

#include <set>

namespace kiln::server {
namespace {

const std::string kHash(64, 'a');

TEST(TokenFileTest, ParsesGrantsSkippingCommentsAndBlankLines) {
  std::string text = "# grants\n\nalice user sha256:" + kHash +
                     "  # trailing comment\n\tops admin sha256:" +
                     std::string(64, 'b') + "\nnode-7 agent sha256:" +
                     std::string(64, 'c') + "\n";
  absl::StatusOr<std::vector<TokenGrant>> grants = parseTokenFile(text, "t");
  ASSERT_TRUE(grants.ok()) << grants.status();
  ASSERT_EQ(grants->size(), 3u);
  EXPECT_EQ((*grants)[0].name, "alice");
  EXPECT_EQ((*grants)[0].role, Role::User);
  EXPECT_EQ((*grants)[0].sha256, kHash);
  EXPECT_EQ((*grants)[1].role, Role::Admin);
  EXPECT_EQ((*grants)[2].role, Role::Agent);
  EXPECT_FALSE((*grants)[0].localOnly);
}

TEST(TokenFileTest, RejectsMalformedLinesNamingThem) {
  struct Case {
    std::string text;
    std::string expected;
  } cases[] = {
      {"alice user\n", "tokens:1: expected 3 fields"},
      {"\nalice root sha256:" + kHash, "tokens:2: 'root' is not a role"},
      {"alice user " + kHash, "sha256:<64 lowercase hex"},
      {"alice user sha256:abc", "sha256:<64 lowercase hex"},
      {"alice user sha256:" + std::string(64, 'A'), "sha256:<64 lowercase hex"},
      {"al/ice user sha256:" + kHash, "is not a name"},
      {"a user sha256:" + kHash + "\na admin sha256:" + std::string(64, 'b'),
       "tokens:2: the name 'a' is used twice"},
      {"a user sha256:" + kHash + "\nb admin sha256:" + kHash,
       "tokens:2: this token hash is already granted"},
  };
  for (const Case &c : cases) {
    absl::StatusOr<std::vector<TokenGrant>> grants =
        parseTokenFile(c.text, "tokens");
    ASSERT_FALSE(grants.ok()) << c.text;
    EXPECT_EQ(grants.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(grants.status().message().find(c.expected), std::string::npos)
        << grants.status();
  }
}

TEST(TokenFileTest, AMissingFileIsInvalidArgumentNamingTheFlag) {
  absl::StatusOr<std::vector<TokenGrant>> grants =
      readTokenFile("/nonexistent/kiln/tokens");
  ASSERT_FALSE(grants.ok());
  EXPECT_EQ(grants.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(grants.status().message().find("--auth-tokens"), std::string::npos);
}

TEST(AccessPolicyTest, EveryDeclaredRpcHasARule) {
  std::set<std::string> ruled;
  for (const auto &[method, roles] : AccessPolicy::methodRoles()) {
    EXPECT_FALSE(roles.empty()) << method;
    ruled.insert(method);
  }
  std::set<std::string> declared;
  // Every kiln.v1 service linked into kilnd (the headers above link them).
  for (const char *name : {"Agent", "Blobs", "Cache", "Compiler", "Daemon",
                           "Devices", "Executor"}) {
    const google::protobuf::ServiceDescriptor *service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
            std::string("kiln.v1.") + name);
    ASSERT_NE(service, nullptr) << name;
    for (int i = 0; i < service->method_count(); ++i)
      declared.insert(service->full_name() + "/" + service->method(i)->name());
  }
  // Every file of the kiln.v1 package: a new service cannot hide.
  for (const google::protobuf::FileDescriptor *file :
       {v1::RegisterAgent::descriptor()->file(),
        v1::ReadRequest::descriptor()->file(),
        v1::GetCacheStatsRequest::descriptor()->file(),
        v1::CompileRequest::descriptor()->file(),
        v1::ListDevicesRequest::descriptor()->file(),
        v1::GetDaemonInfoRequest::descriptor()->file(),
        v1::ExecuteRequest::descriptor()->file()})
    EXPECT_EQ(file->service_count(), 1) << file->name();
  EXPECT_EQ(ruled, declared);
}

TEST(AccessPolicyTest, AdminRpcsAdmitOnlyAdminsAndConnectOnlyAgents) {
  for (const auto &[method, roles] : AccessPolicy::methodRoles()) {
    bool adminOnly = method == "kiln.v1.Cache/CollectGarbage" ||
                     method == "kiln.v1.Cache/SetCacheSalt";
    if (adminOnly)
      EXPECT_EQ(roles, std::vector<Role>{Role::Admin}) << method;
    else if (method == "kiln.v1.Agent/Connect")
      EXPECT_EQ(roles, std::vector<Role>{Role::Agent}) << method;
    else
      EXPECT_EQ(roles.front(), Role::User) << method;
  }
}

TEST(AccessPolicyTest, EnabledOnlyWithCredentials) {
  EXPECT_FALSE(AccessPolicy().enabled());
  EXPECT_TRUE(AccessPolicy({}, /*clientCertificates=*/true).enabled());
  AccessPolicy policy;
  policy.grant(TokenGrant{"local-cpu", Role::Agent, kHash, true});
  EXPECT_TRUE(policy.enabled());
}

TEST(ServerTransportTest, LoopbackAddresses) {
  for (const char *address : {"127.0.0.1:50051", "127.9.0.1:0", "[::1]:0",
                              "localhost:1", "unix:/run/kiln.sock"})
    EXPECT_TRUE(isLoopbackAddress(address)) << address;
  for (const char *address : {"0.0.0.0:50051", "[::]:0", "10.1.2.3:50051",
                              "kiln.example.com:443", "[2001:db8::1]:1"})
    EXPECT_FALSE(isLoopbackAddress(address)) << address;
}

TEST(ServerTransportTest, ReachableAddressesNeedTlsAndCredentialsOrInsecure) {
  EXPECT_TRUE(checkListenAddress("127.0.0.1:0", false, false, false).ok());
  EXPECT_TRUE(checkListenAddress("0.0.0.0:0", true, true, false).ok());
  EXPECT_TRUE(checkListenAddress("0.0.0.0:0", false, false, true).ok());
  absl::Status plain = checkListenAddress("0.0.0.0:0", false, true, false);
  EXPECT_EQ(plain.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(plain.message().find("without TLS"), std::string::npos);
  absl::Status open = checkListenAddress("0.0.0.0:0", true, false, false);
  EXPECT_NE(open.message().find("without credentials"), std::string::npos);
  EXPECT_NE(open.message().find("--insecure"), std::string::npos);
}

TEST(ServerTransportTest, TlsFlagsGoTogether) {
  EXPECT_EQ(serverCredentials({"", "key.pem", ""}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(serverCredentials({"", "", "ca.pem"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(serverCredentials({"cert.pem", "", ""}).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> missing =
      serverCredentials({"/nonexistent/cert.pem", "/nonexistent/key.pem", ""});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--tls-cert"), std::string::npos);
  EXPECT_TRUE(serverCredentials({}).ok());
}

TEST(DaemonFlagsTest, InsecureIsASwitch) {
  absl::StatusOr<DaemonFlags> bare =
      parseDaemonFlags({"--insecure", "--listen", "0.0.0.0:1"}, {});
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_TRUE(bare->insecure);
  EXPECT_EQ(bare->listen, "0.0.0.0:1");
  absl::StatusOr<DaemonFlags> off = parseDaemonFlags({"--insecure=false"}, {});
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->insecure);
  EXPECT_FALSE(parseDaemonFlags({}, {})->insecure);
  EXPECT_TRUE(parseDaemonFlags({}, {{"KILN_INSECURE", "true"}})->insecure);
  EXPECT_EQ(parseDaemonFlags({"--insecure=maybe"}, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

} // namespace
} // namespace kiln::server
