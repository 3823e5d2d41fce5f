//===- Settings.cpp - a program's settings from flags, env and a file -----===//
//
// This file implements Settings on CLI11: typed options with validators
// whose messages name the value, the environment and file sources applied
// through each option's own validation, and the --help formatter.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/Settings.h"

#include "kiln/common/ByteSize.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

#include <algorithm>
#include <unistd.h>

namespace kiln {
namespace {

constexpr const char *kGroup = "Settings";

/// A byte count as --help shows it: whole GiB as "<n>GiB".
std::string byteSizeText(int64_t bytes) {
  return bytes != 0 && bytes % (int64_t{1} << 30) == 0
             ? absl::StrCat(bytes >> 30, "GiB")
             : std::to_string(bytes);
}

/// true/false as CLI11's flags read them, with the spellings Kiln documents.
bool isBooleanText(const std::string &text) {
  static const char *kWords[] = {"true", "false", "1", "0", "yes", "no"};
  std::string lower = absl::AsciiStrToLower(text);
  return std::any_of(std::begin(kWords), std::end(kWords),
                     [&](const char *word) { return lower == word; });
}

/// Accepts an integer of type Int that is at least `minimum`.
template <typename Int> CLI::Validator integerAtLeast(Int minimum) {
  return CLI::Validator(
      [minimum](std::string &value) -> std::string {
        Int number = 0;
        if (absl::SimpleAtoi(value, &number) && number >= minimum)
          return "";
        return absl::StrCat("needs an integer >= ", minimum, ", got '", value,
                            "'");
      },
      "INT");
}

/// The one formatter of Kiln's --help texts:
///   --name  [env VAR, yaml key] (default: value)
///       doc
class SettingsFormatter : public CLI::Formatter {
public:
  using Describe = std::function<std::string(const CLI::Option *)>;
  explicit SettingsFormatter(Describe describe)
      : describe_(std::move(describe)) {}

  std::string make_usage(const CLI::App *, std::string) const override {
    return "";
  }
  std::string make_option(const CLI::Option *option, bool) const override {
    return absl::StrCat("  ", describe_(option), "\n      ",
                        option->get_description(), "\n");
  }

private:
  Describe describe_;
};

} // namespace

Environment processEnvironment() {
  Environment env;
  for (char **entry = environ; entry && *entry; ++entry) {
    std::string text = *entry;
    if (size_t eq = text.find('='); eq != std::string::npos)
      env.emplace(text.substr(0, eq), text.substr(eq + 1));
  }
  return env;
}

Settings::Settings(std::string program, std::string description,
                   std::string envPrefix, bool fileKeys)
    : program_(std::move(program)), envPrefix_(std::move(envPrefix)),
      fileKeys_(fileKeys),
      app_(std::make_unique<CLI::App>(std::move(description), program_)) {
  app_->set_help_flag();
  // Unknown flags and positionals are reported below, in Kiln's words.
  app_->allow_extras();
  app_->formatter(std::make_shared<SettingsFormatter>(
      [this](const CLI::Option *option) { return describe(*option); }));
}

std::string Settings::envName(const std::string &name) const {
  std::string env = absl::StrCat(envPrefix_, name);
  for (char &c : env)
    c = c == '-' ? '_' : absl::ascii_toupper(c);
  return env;
}

std::string Settings::fileKey(const std::string &name) {
  std::string key = name;
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

std::string Settings::describe(const CLI::Option &option) const {
  std::string name = option.get_name(false, true);
  if (auto shown = shownDefaults_.find(name); shown != shownDefaults_.end()) {
    std::string setting = name.substr(2);
    std::string sources = absl::StrCat("[env ", envName(setting));
    if (fileKeys_)
      absl::StrAppend(&sources, ", yaml ", fileKey(setting));
    return absl::StrCat(name, "  ", sources, "] (default: ",
                        shown->second.empty() ? "none" : shown->second, ")");
  }
  if (name == absl::StrCat("--", fileOptionName_))
    return absl::StrCat(name, " FILE  [env ", fileEnvName_,
                        "] (default: none)");
  return name;
}

CLI::Option *Settings::add(const std::string &name, CLI::Option *option,
                           const std::string &shownDefault) {
  option->group(kGroup);
  option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  shownDefaults_[absl::StrCat("--", name)] = shownDefault;
  names_.push_back(name);
  return option;
}

CLI::Option *Settings::text(const std::string &name, std::string &target,
                            const std::string &doc) {
  std::string shown = target;
  return add(name, app_->add_option(absl::StrCat("--", name), target, doc),
             shown);
}

CLI::Option *Settings::integer(const std::string &name, int64_t &target,
                               int64_t minimum, const std::string &doc) {
  std::string shown = std::to_string(target);
  return add(name,
             app_->add_option(absl::StrCat("--", name), target, doc)
                 ->check(integerAtLeast(minimum)),
             shown);
}

CLI::Option *Settings::integer(const std::string &name, unsigned &target,
                               unsigned minimum, const std::string &doc) {
  std::string shown = std::to_string(target);
  return add(name,
             app_->add_option(absl::StrCat("--", name), target, doc)
                 ->check(integerAtLeast(minimum)),
             shown);
}

CLI::Option *Settings::byteSize(const std::string &name, int64_t &target,
                                const std::string &doc) {
  std::string shown = byteSizeText(target);
  CLI::Option *option =
      app_->add_option(absl::StrCat("--", name), target, doc);
  // The transform leaves the byte count for CLI11 to store in `target`.
  option->transform(CLI::Validator(
      [](std::string &value) -> std::string {
        absl::StatusOr<int64_t> bytes = parseByteSize(value);
        if (!bytes.ok())
          return absl::StrCat("needs a byte size such as 20GiB, 512MiB or 0, "
                              "got '", value, "'");
        value = std::to_string(*bytes);
        return "";
      },
      "SIZE"));
  return add(name, option, shown);
}

CLI::Option *Settings::boolean(const std::string &name, bool &target,
                               const std::string &doc, bool isSwitch) {
  std::string shown = target ? "true" : "false";
  std::string flag = absl::StrCat("--", name);
  CLI::Option *option = isSwitch ? app_->add_flag(flag, target, doc)
                                 : app_->add_option(flag, target, doc);
  option->check(CLI::Validator(
      [](std::string &value) -> std::string {
        return isBooleanText(value)
                   ? ""
                   : absl::StrCat("needs true or false, got '", value, "'");
      },
      "BOOL"));
  return add(name, option, shown);
}

CLI::Option *Settings::oneOf(const std::string &name, std::string &target,
                             const std::vector<std::string> &choices,
                             const std::string &doc) {
  std::string shown = target;
  CLI::Option *option =
      app_->add_option(absl::StrCat("--", name), target, doc);
  option->check(CLI::Validator(
      [choices](std::string &value) -> std::string {
        if (std::find(choices.begin(), choices.end(), value) != choices.end())
          return "";
        return absl::StrCat("'", value, "' is not one of ",
                            absl::StrJoin(choices, ", "));
      },
      "CHOICE"));
  return add(name, option, shown);
}

CLI::Option *Settings::commandFlag(const std::string &names, bool &target,
                                   const std::string &doc) {
  return app_->add_flag(names, target, doc)->group(kGroup);
}

void Settings::fileOption(const std::string &name, std::string &target,
                          const std::string &envName, FileSettingsReader reader,
                          const std::string &doc) {
  app_->add_option(absl::StrCat("--", name), target, doc)
      ->group(kGroup)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  filePath_ = &target;
  fileOptionName_ = name;
  fileEnvName_ = envName;
  readFile_ = std::move(reader);
}

absl::Status Settings::applyFrom(CLI::Option &option, const std::string &value,
                                 const std::string &source) {
  try {
    option.clear();
    option.add_result(value);
    option.run_callback();
  } catch (const CLI::ParseError &error) {
    absl::string_view message = error.what();
    absl::ConsumePrefix(&message, absl::StrCat(option.get_name(), ":"));
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", absl::StripAsciiWhitespace(message)));
  }
  return absl::OkStatus();
}

absl::Status Settings::parse(const std::vector<std::string> &args,
                             const Environment &env) {
  // CLI11 takes the arguments last first.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app_->parse(reversed);
  } catch (const CLI::ArgumentMismatch &error) {
    std::string text = error.what();
    return absl::InvalidArgumentError(absl::StrCat(
        "flag '", text.substr(0, text.find(':')), "' needs a value"));
  } catch (const CLI::ParseError &error) {
    return absl::InvalidArgumentError(error.what());
  }
  for (const std::string &extra : app_->remaining()) {
    if (absl::StartsWith(extra, "-"))
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag '", extra.substr(0, extra.find('=')),
                       "' (see ", program_, " --help)"));
    return absl::InvalidArgumentError(absl::StrCat(
        "unexpected argument '", extra, "' (", program_,
        " takes only --flags)"));
  }

  // The command line is applied again last, so that it wins over the
  // environment and the file, which are applied (and validated) below.
  std::vector<std::pair<CLI::Option *, std::vector<std::string>>> commandLine;
  for (const std::string &name : names_) {
    CLI::Option *option = app_->get_option(absl::StrCat("--", name));
    if (option->count() > 0)
      commandLine.emplace_back(option, option->results());
  }

  if (filePath_) {
    if (filePath_->empty())
      if (auto it = env.find(fileEnvName_); it != env.end())
        *filePath_ = it->second;
    if (!filePath_->empty()) {
      absl::StatusOr<std::vector<FileSetting>> settings = readFile_(*filePath_);
      if (!settings.ok())
        return absl::InvalidArgumentError(settings.status().message());
      for (const FileSetting &setting : *settings) {
        auto name = std::find_if(
            names_.begin(), names_.end(),
            [&](const std::string &n) { return fileKey(n) == setting.key; });
        std::string at = absl::StrCat(*filePath_, ":", setting.line,
                                      ": key '", setting.key, "'");
        if (!fileKeys_ || name == names_.end())
          return absl::InvalidArgumentError(absl::StrCat(
              at, " is unknown (keys are the flag names with underscores, "
                  "e.g. cache_dir; see ", program_, " --help)"));
        if (absl::Status status = applyFrom(
                *app_->get_option(absl::StrCat("--", *name)), setting.value,
                at);
            !status.ok())
          return status;
      }
    }
  }
  for (const std::string &name : names_)
    if (auto it = env.find(envName(name)); it != env.end())
      if (absl::Status status =
              applyFrom(*app_->get_option(absl::StrCat("--", name)),
                        it->second,
                        absl::StrCat("environment variable ", envName(name)));
          !status.ok())
        return status;
  for (auto &[option, results] : commandLine) {
    try {
      option->clear();
      option->add_result(results);
      option->run_callback();
    } catch (const CLI::ParseError &error) {
      return absl::InvalidArgumentError(error.what());
    }
  }
  return absl::OkStatus();
}

std::string Settings::help() const { return app_->help(); }

} // namespace kiln
