//===- TorchScriptImport.cpp - TorchScript archive -> kiln.v1.Graph -------===//
//
// This file implements importTorchScript: it spawns kiln-torchscript-import
// on the archive in the compile sandbox (CPU-time, memory and wall-clock
// limits, a minimal environment, a private folder), maps its exit status to
// a status carrying its stderr, and stores the weights it wrote.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/compile/TorchScriptImport.h"

#include "kiln/common/ChildProcess.h"
#include "kiln/common/Digest.h"

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

#include <google/protobuf/util/json_util.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <deque>
#include <optional>
#include <mutex>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>


namespace kiln::server {
namespace {

absl::StatusOr<std::string> readWholeFile(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::InternalError(absl::StrCat("cannot read ", path.string()));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const char *dtypeSpec(v1::DType dtype) {
  switch (dtype) {
  case v1::DTYPE_F32: return "f32";
  case v1::DTYPE_F64: return "f64";
  case v1::DTYPE_F16: return "f16";
  case v1::DTYPE_BF16: return "bf16";
  case v1::DTYPE_I8: return "i8";
  case v1::DTYPE_I16: return "i16";
  case v1::DTYPE_I32: return "i32";
  case v1::DTYPE_I64: return "i64";
  case v1::DTYPE_U8: return "u8";
  case v1::DTYPE_BOOL: return "bool";
  default: return nullptr;
  }
}

/// The importer's exit status when memory ran out (main.cpp).
constexpr int kImporterOutOfMemory = 4;

/// Runs the importer in `dir`: its exit code, or an error when it cannot
/// start, is killed by a signal or hits a limit.
absl::StatusOr<int> runTool(std::vector<std::string> args,
                            const std::filesystem::path &dir,
                            const CompileLimits &limits) {
  std::filesystem::path logPath = dir / "import.log";
  absl::StatusOr<ChildExit> exit =
      runChildProcess(std::move(args), logPath, sandboxedChild(limits, dir));
  if (!exit.ok()) {
    if (absl::IsDeadlineExceeded(exit.status()))
      return wallClockFailure(limits, "the TorchScript import");
    return absl::InternalError(absl::StrCat(
        "cannot run the TorchScript importer: ", exit.status().message(),
        " (build kiln-torchscript-import, or set KILN_TORCHSCRIPT_IMPORT)"));
  }
  if (std::optional<absl::Status> limit = limitFailure(
          *exit, limits, kImporterOutOfMemory, "the TorchScript import"))
    return *limit;
  if (!exit->exited) {
    auto log = readWholeFile(logPath);
    return absl::InternalError(absl::StrCat(
        "the TorchScript importer ", exit->describe(), ": ", log.ok() ? *log : ""));
  }
  return exit->code;
}

/// Conversions already made, keyed by tool, archive digest and input types:
/// repeated compiles of one archive skip the second or so libtorch takes.
/// An entry is used only while all its weights are still in the store.
class ConversionCache {
public:
  std::optional<v1::Graph> find(const std::string &key, const ContentStore &store) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = graphs.find(key);
    if (it == graphs.end())
      return std::nullopt;
    for (const v1::Parameter &parameter : it->second.parameters())
      if (!store.contains(parameter.digest()))
        return std::nullopt;
    return it->second;
  }

  void insert(const std::string &key, const v1::Graph &graph) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!graphs.emplace(key, graph).second)
      return;
    order.push_back(key);
    if (order.size() > kCapacity) {
      graphs.erase(order.front());
      order.pop_front();
    }
  }

private:
  static constexpr size_t kCapacity = 64;
  std::mutex mutex;
  absl::flat_hash_map<std::string, v1::Graph> graphs;
  std::deque<std::string> order;
};

ConversionCache &conversionCache() {
  static ConversionCache *cache = new ConversionCache();
  return *cache;
}

} // namespace

std::filesystem::path torchScriptImportTool() {
  if (const char *env = std::getenv("KILN_TORCHSCRIPT_IMPORT"); env && *env)
    return env;
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (ec ? std::filesystem::path(".") : self.parent_path()) /
         "kiln-torchscript-import";
}

absl::StatusOr<v1::Graph>
importTorchScript(const v1::TorchScriptModule &module, ContentStore &store,
                  const std::filesystem::path &tool,
                  const CompileLimits &limits) {
  std::string archive;
  switch (module.archive_case()) {
  case v1::TorchScriptModule::kData:
    archive = module.data();
    break;
  case v1::TorchScriptModule::kBlob: {
    absl::StatusOr<std::string> bytes = store.read(module.blob());
    if (!bytes.ok())
      return absl::FailedPreconditionError(absl::StrCat(
          "torchscript.blob: ", bytes.status().message()));
    archive = *std::move(bytes);
    break;
  }
  default:
    return absl::InvalidArgumentError("torchscript has neither data nor blob");
  }
  std::vector<std::string> args = {tool.string()};
  std::string pattern =
      (std::filesystem::temp_directory_path() / "kiln-torchscript-XXXXXX").string();
  if (!mkdtemp(pattern.data()))
    return absl::InternalError(absl::StrCat("mkdtemp: ", std::strerror(errno)));
  std::filesystem::path dir = pattern;
  absl::Cleanup removeDir = [&] {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  };
  {
    std::ofstream out(dir / "module.pt", std::ios::binary);
    out.write(archive.data(), static_cast<std::streamsize>(archive.size()));
    if (!out)
      return absl::InternalError("cannot write the TorchScript archive");
  }
  args.push_back((dir / "module.pt").string());
  args.push_back(dir.string());
  for (int i = 0; i < module.inputs_size(); ++i) {
    const v1::TensorType &type = module.inputs(i);
    const char *dtype = dtypeSpec(type.dtype());
    if (!dtype)
      return absl::InvalidArgumentError(
          absl::StrCat("torchscript.inputs[", i, "] has no dtype"));
    std::string spec = absl::StrCat(dtype, ":");
    for (int d = 0; d < type.shape_size(); ++d) {
      if (type.shape(d) < 0)
        return absl::InvalidArgumentError(
            absl::StrCat("torchscript.inputs[", i, "] has a negative extent"));
      absl::StrAppend(&spec, d ? "x" : "", type.shape(d));
    }
    args.push_back(spec);
  }
  std::string key = absl::StrCat(tool.string(), "|", sha256Hex(archive), "|",
                                 absl::StrJoin(args.begin() + 3, args.end(), ","));
  if (std::optional<v1::Graph> cached = conversionCache().find(key, store))
    return *std::move(cached);
  absl::StatusOr<int> code = runTool(args, dir, limits);
  if (!code.ok())
    return code.status();
  if (*code != 0) {
    absl::StatusOr<std::string> log = readWholeFile(dir / "import.log");
    std::string message = log.ok() ? *log : "(no log)";
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    message = absl::StrCat("TorchScript import: ", message);
    if (*code == 2)
      return absl::InvalidArgumentError(message);
    if (*code == 3)
      return absl::UnimplementedError(message);
    return absl::InternalError(message);
  }
  absl::StatusOr<std::string> json = readWholeFile(dir / "graph.json");
  if (!json.ok())
    return json.status();
  v1::Graph graph;
  auto parsed = google::protobuf::util::JsonStringToMessage(*json, &graph);
  if (!parsed.ok())
    return absl::InternalError(absl::StrCat(
        "the TorchScript importer wrote a graph kilnd cannot parse: ",
        parsed.ToString()));
  for (int i = 0; i < graph.parameters_size(); ++i) {
    absl::StatusOr<std::string> bytes =
        readWholeFile(dir / absl::StrCat("param_", i, ".bin"));
    if (!bytes.ok())
      return bytes.status();
    absl::StatusOr<v1::Digest> digest = store.put(*bytes);
    if (!digest.ok())
      return digest.status();
    *graph.mutable_parameters(i)->mutable_digest() = *digest;
  }
  conversionCache().insert(key, graph);
  return graph;
}

absl::Status nameTorchScriptValue(const absl::Status &status,
                                  const v1::Graph &graph) {
  absl::string_view message = status.message();
  std::vector<std::string> values;
  for (size_t at = message.find("node "); at != absl::string_view::npos;
       at = message.find("node ", at + 1)) {
    absl::string_view rest = message.substr(at + 5);
    size_t digits = 0;
    while (digits < rest.size() && absl::ascii_isdigit(rest[digits]))
      ++digits;
    int index = 0;
    if (digits == 0 || digits == rest.size() ||
        (rest[digits] != ':' && rest[digits] != ' ') ||
        !absl::SimpleAtoi(rest.substr(0, digits), &index) ||
        index >= graph.nodes_size() || !graph.nodes(index).outputs_size())
      continue;
    std::string value = absl::StrCat("%", graph.nodes(index).outputs(0).name());
    if (std::find(values.begin(), values.end(), value) == values.end())
      values.push_back(std::move(value));
  }
  if (values.empty())
    return status;
  return absl::Status(status.code(),
                      absl::StrCat(message, " [TorchScript value",
                                   values.size() > 1 ? "s " : " ",
                                   absl::StrJoin(values, ", "), "]"));
}

} // namespace kiln::server
