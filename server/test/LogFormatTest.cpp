//===- LogFormatTest.cpp - JSON log lines ---------------------------------===//
//
// This file implements tests for the JSON log format: one valid JSON object
// per line whatever the message holds (quotes, control characters, bytes
// that are not UTF-8), with the thread's request id.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/Logging.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spdlog/details/log_msg.h>
#include <spdlog/formatter.h>

namespace kiln {
namespace {

std::string formatLine(const std::string &payload) {
  std::unique_ptr<spdlog::formatter> formatter = makeLogFormatter(LogFormat::Json);
  spdlog::details::log_msg msg("kilnd", spdlog::level::warn, payload);
  spdlog::memory_buf_t out;
  formatter->format(msg, out);
  return std::string(out.data(), out.size());
}

TEST(LogFormatTest, JsonLinesAreValidJsonWhateverTheMessageHolds) {
  std::string nasty = "a \"quoted\" \\ path\nnext\tline \x01 and \xff\xfe bytes";
  std::string line = formatLine(nasty);
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line";
  nlohmann::json parsed = nlohmann::json::parse(line); // throws if invalid
  EXPECT_EQ(parsed["level"], "warning");
  EXPECT_EQ(parsed["logger"], "kilnd");
  std::string msg = parsed["msg"];
  EXPECT_TRUE(msg.starts_with("a \"quoted\" \\ path\nnext\tline \x01 and ")) << msg;
  EXPECT_NE(msg.find("\xef\xbf\xbd"), std::string::npos) << "invalid UTF-8 became U+FFFD";
  EXPECT_FALSE(parsed.contains("request_id"));
  std::string time = parsed["time"];
  EXPECT_EQ(time.size(), 24u);
  EXPECT_EQ(time.back(), 'Z');
}

TEST(LogFormatTest, JsonLinesCarryTheRequestId) {
  ScopedRequestId scope("0123456789abcdef0123456789abcdef");
  nlohmann::json parsed = nlohmann::json::parse(formatLine("hello"));
  EXPECT_EQ(parsed["request_id"], "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(parsed["msg"], "hello");
}

} // namespace
} // namespace kiln
