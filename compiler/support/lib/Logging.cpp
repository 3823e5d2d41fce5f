//===- Logging.cpp - spdlog setup and request ids -------------------------===//
//
// This file implements Kiln's log formats (text and JSON lines), the
// per-thread request id they print, and configureLogging.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/Logging.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>

namespace kiln {

namespace {

thread_local std::string threadRequestId;

/// `%*` in the text pattern: " (request <id>)" while a request is served.
class RequestIdFlag : public spdlog::custom_flag_formatter {
public:
  void format(const spdlog::details::log_msg &, const std::tm &,
              spdlog::memory_buf_t &dest) override {
    const std::string &id = currentRequestId();
    if (id.empty())
      return;
    std::string text = absl::StrCat(" (request ", id, ")");
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<RequestIdFlag>();
  }
};

/// One JSON object per line.
class JsonFormatter : public spdlog::formatter {
public:
  void format(const spdlog::details::log_msg &msg,
              spdlog::memory_buf_t &dest) override {
    auto sinceEpoch = msg.time.time_since_epoch();
    std::time_t seconds =
        std::chrono::duration_cast<std::chrono::seconds>(sinceEpoch).count();
    int millis = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(sinceEpoch)
            .count() %
        1000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    spdlog::string_view_t level = spdlog::level::to_string_view(msg.level);
    nlohmann::ordered_json line;
    line["time"] = absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                                   utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                                   utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
    line["level"] = std::string(level.data(), level.size());
    line["logger"] = std::string(msg.logger_name.data(), msg.logger_name.size());
    line["msg"] = std::string(msg.payload.data(), msg.payload.size());
    if (const std::string &id = currentRequestId(); !id.empty())
      line["request_id"] = id;
    // Bytes that are not UTF-8 (a path, a peer's message) become U+FFFD
    // instead of making the line invalid JSON.
    std::string text =
        line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    text += '\n';
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

} // namespace

absl::StatusOr<LogFormat> parseLogFormat(std::string_view text) {
  if (text == "text")
    return LogFormat::Text;
  if (text == "json")
    return LogFormat::Json;
  return absl::InvalidArgumentError(absl::StrCat(
      "--log-format: '", std::string(text), "' is not one of text, json"));
}

std::unique_ptr<spdlog::formatter> makeLogFormatter(LogFormat format) {
  if (format == LogFormat::Json)
    return std::make_unique<JsonFormatter>();
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<RequestIdFlag>('*').set_pattern(
      "[%Y-%m-%d %H:%M:%S.%e] [%n] [%^%l%$] %v%*");
  return formatter;
}

absl::Status configureLogging(std::string_view loggerName,
                              std::string_view level, LogFormat format) {
  spdlog::level::level_enum parsed =
      spdlog::level::from_str(std::string(level));
  // from_str answers `off` for anything it does not know.
  if (parsed == spdlog::level::off && level != "off")
    return absl::InvalidArgumentError(
        absl::StrCat("--log-level: unknown level '", std::string(level), "'"));
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(
      format == LogFormat::Json ? spdlog::color_mode::never
                                : spdlog::color_mode::automatic);
  auto logger =
      std::make_shared<spdlog::logger>(std::string(loggerName), sink);
  logger->set_formatter(makeLogFormatter(format));
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
  return absl::OkStatus();
}

const std::string &currentRequestId() { return threadRequestId; }

ScopedRequestId::ScopedRequestId(std::string requestId)
    : previous(std::exchange(threadRequestId, std::move(requestId))) {}

ScopedRequestId::~ScopedRequestId() {
  threadRequestId = std::move(previous);
}

} // namespace kiln
