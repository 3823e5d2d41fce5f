//===- AcapArtifact.cpp - what an acap xclbin holds -----------------------===//
#include "kiln/agent/acap/AcapArtifact.h"

#include "kiln/common/AieArray.h"
#include "kiln/common/AtomicFile.h"

#include "absl/strings/str_cat.h"

#include <xrt/experimental/xrt_xclbin.h>

#include <cstddef>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

namespace kiln::agent::acap {
namespace {

using aie::kHostSection;
using aie::kPlanSection;

/// One section of a checked container: its kind, name and body.
struct Section {
  uint32_t kind;
  std::string_view name, body;
};

/// A string at offset `at` of a section body, or nullopt past its end.
std::optional<std::string> sectionString(std::string_view body, uint32_t at) {
  if (at >= body.size())
    return std::nullopt;
  size_t end = body.find('\0', at);
  if (end == std::string_view::npos)
    return std::nullopt;
  return std::string(body.substr(at, end - at));
}

absl::Status malformed(const std::filesystem::path &path, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "acap artifact '", path.string(), "': ", std::string(why)));
}

/// The sections of `bytes`, an axlf container whose header and section
/// table must fit it and whose sections must be the kinds Kiln writes.
/// XRT 2.13 trusts the header: it copies m_length bytes whatever the file's
/// size, and parses sections it knows by their own counts; so nothing
/// reaches it unchecked.
absl::StatusOr<std::vector<Section>> sectionsOf(std::string_view bytes) {
  const uint64_t size = bytes.size();
  if (size < sizeof(axlf))
    return absl::InvalidArgumentError(absl::StrCat(
        "it is ", size, " bytes, shorter than an xclbin header (", sizeof(axlf), ")"));
  axlf top;
  std::memcpy(&top, bytes.data(), offsetof(axlf, m_sections));
  if (std::memcmp(top.m_magic, "xclbin2", 8) != 0)
    return absl::InvalidArgumentError("it does not start with the xclbin2 magic");
  const uint64_t count = top.m_header.m_numSections;
  if (top.m_header.m_length != size ||
      count > (size - offsetof(axlf, m_sections)) / sizeof(axlf_section_header))
    return absl::InvalidArgumentError(absl::StrCat(
        "its header says ", top.m_header.m_length, " bytes and ", count,
        " sections, the file has ", size, " bytes"));
  std::vector<Section> sections;
  for (uint64_t i = 0; i < count; ++i) {
    axlf_section_header h;
    std::memcpy(&h, bytes.data() + offsetof(axlf, m_sections) + i * sizeof h, sizeof h);
    if (h.m_sectionOffset > size || h.m_sectionSize > size - h.m_sectionOffset)
      return absl::InvalidArgumentError(
          absl::StrCat("its section ", i, " lies outside the file"));
    if (h.m_sectionKind != BUILD_METADATA && h.m_sectionKind != SOFT_KERNEL &&
        h.m_sectionKind != USER_METADATA)
      return absl::InvalidArgumentError(absl::StrCat(
          "its section ", i, " is of kind ", h.m_sectionKind,
          ", which Kiln's acap target does not write"));
    size_t nameLength = strnlen(h.m_sectionName, sizeof h.m_sectionName);
    sections.push_back(
        {h.m_sectionKind,
         bytes.substr(offsetof(axlf, m_sections) + i * sizeof h +
                          offsetof(axlf_section_header, m_sectionName),
                      nameLength),
         bytes.substr(h.m_sectionOffset, h.m_sectionSize)});
  }
  return sections;
}

/// The body of the section of `kind` named `name`, or nullopt.
std::optional<std::string_view> find(const std::vector<Section> &sections,
                                     uint32_t kind, std::string_view name) {
  for (const Section &section : sections)
    if (section.kind == kind && section.name == name)
      return section.body;
  return std::nullopt;
}

} // namespace

absl::StatusOr<AcapArtifact> readAcapArtifact(const std::filesystem::path &path) {
  absl::StatusOr<std::string> bytes = readWholeFile(path);
  if (!bytes.ok())
    return malformed(path, absl::StrCat("cannot read it (", bytes.status().message(), ")"));
  absl::StatusOr<std::vector<Section>> sections = sectionsOf(*bytes);
  if (!sections.ok())
    return malformed(path, std::string(sections.status().message()));
  // XRT reads its own copy of the checked bytes: the container as a board
  // would load it.
  AcapArtifact artifact;
  try {
    xrt::xclbin xclbin(std::vector<char>(bytes->begin(), bytes->end()));
    artifact.uuid = xclbin.get_uuid().to_string();
    artifact.platform = xclbin.get_xsa_name();
  } catch (const std::exception &e) {
    return malformed(path, absl::StrCat("XRT cannot read it as an xclbin (",
                                        e.what(), ")"));
  }

  std::optional<std::string_view> host = find(*sections, SOFT_KERNEL, kHostSection);
  if (!host)
    return malformed(path, absl::StrCat("no SOFT_KERNEL section '", kHostSection,
                                        "' (the host code)"));
  soft_kernel header;
  if (host->size() < sizeof header)
    return malformed(path, "its host code section is shorter than its header");
  std::memcpy(&header, host->data(), sizeof header);
  if (header.m_image_offset > host->size() ||
      header.m_image_size > host->size() - header.m_image_offset)
    return malformed(path, "its host code image lies outside its section");
  artifact.hostImage = std::string(host->substr(header.m_image_offset, header.m_image_size));
  std::optional<std::string> symbol = sectionString(*host, header.mpo_symbol_name);
  if (!symbol || symbol->empty())
    return malformed(path, "its host code section names no entry symbol");
  artifact.hostSymbol = *symbol;

  std::optional<std::string_view> plan = find(*sections, USER_METADATA, kPlanSection);
  if (!plan)
    return malformed(path, absl::StrCat("no USER_METADATA section '", kPlanSection,
                                        "' (the AI Engine plan)"));
  if (plan->size() > size_t(std::numeric_limits<int>::max()) ||
      !artifact.plan.ParseFromArray(plan->data(), int(plan->size())))
    return malformed(path, "its AI Engine plan is not a kiln.v1.AiePlan");
  return artifact;
}

} // namespace kiln::agent::acap
