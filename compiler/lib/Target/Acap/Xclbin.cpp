//===- Xclbin.cpp - Xilinx xclbin (axlf) containers -----------------------===//
#include "Xclbin.h"

#include "kiln/common/Digest.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MD5.h"

#include <xrt/xclbin.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace kiln::compiler::acap {
namespace {

static_assert(uint32_t(XclbinSectionKind::BuildMetadata) == BUILD_METADATA);
static_assert(uint32_t(XclbinSectionKind::UserMetadata) == USER_METADATA);
static_assert(uint32_t(XclbinSectionKind::SoftKernel) == SOFT_KERNEL);

/// The version of the axlf layout written: XRT 2.13's, as Debian 12 ships.
constexpr uint8_t kVersionMajor = 2;
constexpr uint8_t kVersionMinor = 13;

size_t align8(size_t n) { return (n + 7) & ~size_t(7); }

void copyString(char *field, size_t size, std::string_view text) {
  std::memcpy(field, text.data(), std::min(text.size(), size - 1));
}

} // namespace

std::string writeXclbin(std::string_view platform,
                        const std::vector<XclbinSection> &sections) {
  const size_t count = sections.size();
  const size_t headerBytes =
      sizeof(axlf) + (count > 0 ? count - 1 : 0) * sizeof(axlf_section_header);
  size_t offset = align8(headerBytes);
  std::string identity;
  std::vector<axlf_section_header> headers(count);
  for (size_t i = 0; i < count; ++i) {
    axlf_section_header &h = headers[i];
    std::memset(&h, 0, sizeof h);
    h.m_sectionKind = uint32_t(sections[i].kind);
    copyString(h.m_sectionName, sizeof h.m_sectionName, sections[i].name);
    h.m_sectionOffset = offset;
    h.m_sectionSize = sections[i].data.size();
    offset = align8(offset + sections[i].data.size());
    identity += sections[i].name;
    identity += sha256Hex(sections[i].data);
  }
  const std::string digest = llvm::fromHex(sha256Hex(identity)); // 32 bytes

  axlf top;
  std::memset(&top, 0, sizeof top);
  std::memcpy(top.m_magic, "xclbin2", 8);
  top.m_signature_length = -1;
  std::memset(top.reserved, 0xff, sizeof top.reserved);
  std::memset(top.m_keyBlock, 0xff, sizeof top.m_keyBlock);
  std::memcpy(&top.m_uniqueId, digest.data() + 16, sizeof top.m_uniqueId);
  axlf_header &h = top.m_header;
  h.m_length = offset;
  h.m_versionMajor = kVersionMajor;
  h.m_versionMinor = kVersionMinor;
  h.m_mode = XCLBIN_FLAT;
  copyString(reinterpret_cast<char *>(h.m_platformVBNV), sizeof h.m_platformVBNV,
             platform);
  std::memcpy(&h.uuid, digest.data(), sizeof h.uuid);
  h.m_numSections = uint32_t(count);

  std::string out(offset, '\0');
  std::memcpy(out.data(), &top, offsetof(axlf, m_sections));
  if (count > 0)
    std::memcpy(out.data() + offsetof(axlf, m_sections), headers.data(),
                count * sizeof(axlf_section_header));
  for (size_t i = 0; i < count; ++i)
    std::memcpy(out.data() + headers[i].m_sectionOffset,
                sections[i].data.data(), sections[i].data.size());
  return out;
}

std::string softKernelSection(std::string_view name, std::string_view version,
                              std::string_view symbol, std::string_view image) {
  llvm::MD5 md5;
  md5.update(llvm::StringRef(image.data(), image.size()));
  llvm::MD5::MD5Result result = md5.final();
  std::string md5Hex = llvm::toHex(result, /*LowerCase=*/true);

  soft_kernel header;
  std::memset(&header, 0, sizeof header);
  std::string strings;
  auto add = [&](std::string_view text) {
    uint32_t at = uint32_t(sizeof header + strings.size());
    strings.append(text);
    strings.push_back('\0');
    return at;
  };
  header.mpo_name = add(name);
  header.mpo_version = add(version);
  header.mpo_md5_value = add(md5Hex);
  header.mpo_symbol_name = add(symbol);
  header.m_num_instances = 1;
  strings.resize(align8(sizeof header + strings.size()) - sizeof header, '\0');
  header.m_image_offset = uint32_t(sizeof header + strings.size());
  header.m_image_size = uint32_t(image.size());

  std::string out(reinterpret_cast<const char *>(&header), sizeof header);
  out += strings;
  out.append(image);
  return out;
}

} // namespace kiln::compiler::acap
