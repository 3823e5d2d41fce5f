//===- Logging.h - spdlog setup and request ids shared by kilnd/agents -*- C++ -*-===//
//
// This file declares the logging setup every Kiln process uses: a level, a
// text or JSON (one object per line) format, and the request id of the RPC a
// thread is serving, which every log line written meanwhile carries.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"

#include <memory>
#include <string>
#include <string_view>

namespace spdlog {
class formatter;
} // namespace spdlog

namespace kiln {

/// How log lines look.
enum class LogFormat {
  /// `[time] [logger] [level] message [request <id>]`, for people.
  Text,
  /// One JSON object per line: time, level, logger, msg and, when the line
  /// is about a request, request_id. For log pipelines.
  Json,
};

/// Parses "text" or "json"; INVALID_ARGUMENT naming both otherwise.
absl::StatusOr<LogFormat> parseLogFormat(std::string_view text);

/// Replaces the default logger with one named `loggerName` writing to stderr
/// at `level` (trace .. off) in `format`. INVALID_ARGUMENT for an unknown
/// level.
absl::Status configureLogging(std::string_view loggerName,
                              std::string_view level, LogFormat format);

/// The formatter configureLogging installs; exposed for tests.
std::unique_ptr<spdlog::formatter> makeLogFormatter(LogFormat format);

/// The request id the calling thread is serving ("" when none).
const std::string &currentRequestId();

/// Sets the calling thread's request id for its lifetime and restores the
/// previous one on destruction.
class ScopedRequestId {
public:
  explicit ScopedRequestId(std::string requestId);
  ~ScopedRequestId();
  ScopedRequestId(const ScopedRequestId &) = delete;
  ScopedRequestId &operator=(const ScopedRequestId &) = delete;

private:
  std::string previous;
};

} // namespace kiln
