//===- AieArray.cpp - Kiln's model of an AI Engine array ------------------===//
#include "kiln/common/AieArray.h"

#include "absl/strings/str_cat.h"

#include "kiln_rt_kernels.h"

#include <algorithm>

namespace kiln::aie {
namespace {

// kiln_rt_convolution and kiln_rt_matmul (compiler/runtime/kiln_rt_kernels.h)
// as the flat int64 arrays the host code passes.
constexpr size_t kConvolutionFields = 31;
constexpr size_t kConvolutionChannelsLast = 30;
constexpr size_t kMatmulFields = 10;
constexpr size_t kEpilogueResidual = 1; // within the 3 epilogue fields
static_assert(sizeof(kiln_rt_elementwise) ==
              KILN_RT_ELEMENTWISE_FIELDS * sizeof(int64_t));

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Bounds on what a geometry may say, so that the model's arithmetic
/// cannot overflow: each extent, and a site's MACs.
constexpr int64_t kMaxExtent = int64_t{1} << 20;
constexpr int64_t kMaxMacs = int64_t{1} << 50;
/// The most elements an elementwise chain may stream.
constexpr int64_t kMaxElements = int64_t{1} << 32;
/// The largest block side a plan may name (a tile's memory holds far less).
constexpr int64_t kMaxBlock = 4096;

v1::AieArray aieMl304() {
  // The VE2802's array: 38 columns of 8 AIE-ML tiles. Per tile 64 KiB of
  // data memory (1 KiB stack and 1 KiB heap by default), two stream-to-
  // memory and two memory-to-stream DMA channels of 32 bits a cycle, and
  // 128 bf16 MACs a cycle; two DDR channels each way per interface tile.
  v1::AieArray array;
  array.set_name(std::string(kDefaultArray));
  array.set_columns(38);
  array.set_rows(8);
  array.set_data_memory_bytes(64 * 1024);
  array.set_reserved_bytes(2 * 1024);
  array.set_dma_in_channels(2);
  array.set_dma_out_channels(2);
  array.set_stream_bytes_per_cycle(4);
  array.set_shim_in_channels(2);
  array.set_shim_out_channels(2);
  array.set_bf16_macs_per_cycle(128);
  array.set_clock_hz(1'250'000'000);
  array.set_setup_cycles(256);
  // One 512-bit vector of f32 per cycle and step.
  array.set_f32_lanes_per_cycle(16);
  return array;
}

const std::vector<v1::AieArray> &arrays() {
  static const std::vector<v1::AieArray> all = {aieMl304()};
  return all;
}

absl::Status badGeometry(std::string_view kind, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("a ", std::string(kind), " call site's geometry ",
                   std::string(why)));
}

/// An elementwise chain's geometry checked: every step a known op reading
/// only the inputs and earlier steps, unused steps zero.
absl::StatusOr<SiteProducts> chainProducts(std::span<const int64_t> g) {
  constexpr std::string_view kind = "elementwise";
  if (g.size() != KILN_RT_ELEMENTWISE_FIELDS)
    return badGeometry(kind, absl::StrCat("has ", g.size(), " fields, not ",
                                          KILN_RT_ELEMENTWISE_FIELDS));
  kiln_rt_elementwise chain;
  std::copy(g.begin(), g.end(), reinterpret_cast<int64_t *>(&chain));
  if (chain.elements < 1 || chain.elements > kMaxElements)
    return badGeometry(kind, absl::StrCat("has ", chain.elements, " elements"));
  if (chain.inputs < 1 || chain.inputs > KILN_RT_ELEMENTWISE_MAX_INPUTS)
    return badGeometry(kind, absl::StrCat("has ", chain.inputs, " inputs"));
  if (chain.steps < 1 || chain.steps > KILN_RT_ELEMENTWISE_MAX_STEPS)
    return badGeometry(kind, absl::StrCat("has ", chain.steps, " steps"));
  for (int64_t i = 0; i < KILN_RT_ELEMENTWISE_MAX_STEPS; ++i) {
    const kiln_rt_elementwise_step &step = chain.step[i];
    if (i >= chain.steps) {
      if (step.op || step.lhs || step.rhs || step.scalar)
        return badGeometry(kind, absl::StrCat("has an unused step ", i, " that is not 0"));
      continue;
    }
    const int64_t registers = chain.inputs + i; // those defined before it
    if (step.op < KILN_RT_ELEMENTWISE_ADD || step.op > KILN_RT_ELEMENTWISE_CLAMP_MAX)
      return badGeometry(kind, absl::StrCat("has step ", i, " of unknown op ", step.op));
    if (step.lhs < 0 || step.lhs >= registers || step.rhs < 0 ||
        step.rhs >= (kiln_rt_elementwise_reads_rhs(step.op) ? registers : 1))
      return badGeometry(kind, absl::StrCat("has step ", i, " reading register ",
                                            step.lhs, " and ", step.rhs, " of ",
                                            registers));
  }
  SiteProducts p;
  p.problems = 1;
  p.m = chain.elements;
  p.n = 1;
  p.k = chain.steps;
  p.elementwise = true;
  p.inputs = chain.inputs;
  return p;
}

} // namespace

const v1::AieArray *lookupArray(std::string_view name) {
  for (const v1::AieArray &array : arrays())
    if (array.name() == name)
      return &array;
  return nullptr;
}

std::vector<std::string> arrayNames() {
  std::vector<std::string> names;
  for (const v1::AieArray &array : arrays())
    names.push_back(array.name());
  return names;
}

absl::StatusOr<SiteProducts> siteProducts(std::string_view kind,
                                          std::span<const int64_t> g) {
  SiteProducts p;
  if (kind == "matmul") {
    if (g.size() != kMatmulFields)
      return badGeometry(kind, absl::StrCat("has ", g.size(), " fields, not ",
                                            kMatmulFields));
    for (int i = 0; i < 4; ++i)
      if (g[i] < 1 || g[i] > kMaxExtent)
        return badGeometry(kind, absl::StrCat("has field ", i, " = ", g[i]));
    p.problems = g[0];
    p.m = g[1];
    p.n = g[2];
    p.k = g[3];
    p.hasResidual = g[7 + kEpilogueResidual] != 0;
  } else if (kind == "convolution") {
    if (g.size() != kConvolutionFields)
      return badGeometry(kind, absl::StrCat("has ", g.size(), " fields, not ",
                                            kConvolutionFields));
    int64_t rank = g[0], batch = g[1], in = g[2], out = g[3], groups = g[4];
    if (rank < 1 || rank > 3)
      return badGeometry(kind, absl::StrCat("has spatial rank ", rank));
    // The array's convolutions stream channels-first tensors; the compiler
    // keeps channels last for oneDNN only.
    if (g[kConvolutionChannelsLast] != 0)
      return badGeometry(kind, "is channels last, which the array does not take");
    for (int i = 1; i <= 4; ++i)
      if (g[i] < 1 || g[i] > kMaxExtent)
        return badGeometry(kind, absl::StrCat("has field ", i, " = ", g[i]));
    if (in % groups != 0 || out % groups != 0)
      return badGeometry(kind, absl::StrCat("has ", groups, " groups for ", in,
                                            " -> ", out, " channels"));
    int64_t pixels = 1, window = 1;
    for (int64_t d = 0; d < 3; ++d) {
      if (g[9 + d] < 1 || g[12 + d] < 1 || g[9 + d] > kMaxExtent ||
          g[12 + d] > kMaxExtent)
        return badGeometry(kind, "has an empty or huge kernel or output extent");
      window *= g[9 + d]; // at most 2^60 after three
      pixels *= g[12 + d];
    }
    p.problems = batch * groups;
    p.m = pixels;
    p.n = out / groups;
    if (__builtin_mul_overflow(in / groups, window, &p.k))
      return badGeometry(kind, "has a kernel window too large to count");
    p.hasResidual = g[27 + kEpilogueResidual] != 0;
  } else if (kind == "elementwise") {
    return chainProducts(g);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown kernel call site kind '", std::string(kind), "'"));
  }
  // Bound the products (MACs) so that no sum over them overflows.
  int64_t macs = 0;
  if (p.problems < 1 || p.m < 1 || p.n < 1 || p.k < 1 ||
      __builtin_mul_overflow(p.problems, p.m, &macs) ||
      __builtin_mul_overflow(macs, p.n, &macs) ||
      __builtin_mul_overflow(macs, p.k, &macs) || macs > kMaxMacs)
    return badGeometry(kind, "has an empty extent, or more than 2^50 MACs");
  return p;
}

int64_t blockMemoryBytes(const SiteProducts &p, int64_t blockM,
                         int64_t blockN, int64_t blockK) {
  if (p.elementwise)
    return 2 * (p.inputs + 1) * blockM * 4;
  const bool hasResidual = p.hasResidual;
  int64_t operands = 2 * (blockM * blockK + blockK * blockN) * 2; // bf16 x2
  int64_t block = blockM * blockN * 4;                            // f32
  int64_t vectors = 3 * blockN * 4; // bias, scale, shift slices
  return operands + block * (hasResidual ? 3 : 2) + vectors;
}

namespace {

/// siteCycles for a chain: a tile's elements stream in on its input
/// channels, every step is one vector op per f32_lanes_per_cycle elements,
/// the result streams out, overlapped block by block (double-buffered), and
/// the last block drains.
int64_t chainCycles(const SiteProducts &p, const v1::AieSite &site,
                    const v1::AieArray &array) {
  const int64_t bm = site.block_m();
  const int64_t tiles = std::max<int64_t>(site.tiles(), 1);
  const int64_t stream = array.stream_bytes_per_cycle();
  const int64_t blocks = ceilDiv(p.m, bm);
  const int64_t elements = std::min(p.m, ceilDiv(blocks, tiles) * bm);
  const int64_t channels =
      std::max<int64_t>(std::min<int64_t>(p.inputs, array.dma_in_channels()), 1);
  const int64_t compute =
      p.k * ceilDiv(elements, std::max(array.f32_lanes_per_cycle(), 1));
  const int64_t in = ceilDiv(p.inputs * elements * 4, channels * stream);
  const int64_t out = ceilDiv(elements * 4, stream);
  const int64_t drain = ceilDiv(std::min(bm, p.m) * 4, stream);
  const int64_t perTile = std::max({compute, in, out}) + drain;
  const int64_t columns = ceilDiv(tiles, array.rows());
  const int64_t shimIn = ceilDiv(p.inputs * p.m * 4,
                                 columns * array.shim_in_channels() * stream);
  const int64_t shimOut =
      ceilDiv(p.m * 4, columns * array.shim_out_channels() * stream);
  return array.setup_cycles() + std::max({perTile, shimIn, shimOut});
}

} // namespace

int64_t siteCycles(const SiteProducts &p, const v1::AieSite &site,
                   const v1::AieArray &array) {
  if (p.elementwise)
    return chainCycles(p, site, array);
  const int64_t bm = site.block_m(), bn = site.block_n(), bk = site.block_k();
  const int64_t tiles = std::max<int64_t>(site.tiles(), 1);
  const int64_t stream = array.stream_bytes_per_cycle();
  const int64_t blocks = p.problems * ceilDiv(p.m, bm) * ceilDiv(p.n, bn);
  const int64_t steps = ceilDiv(p.k, bk);
  // One k step: the vector unit's MACs against the slower of the two input
  // channels (A slices on one, B slices on the other), double-buffered.
  const int64_t aBytes = bm * bk * 2, bBytes = bk * bn * 2;
  const int64_t step = std::max(ceilDiv(bm * bn * bk, array.bf16_macs_per_cycle()),
                                ceilDiv(std::max(aBytes, bBytes), stream));
  // A block's result drains on an output channel while the next block
  // computes; a residual comes in on the B channel after the last slice.
  const int64_t outBytes = bm * bn * 4;
  const int64_t drain = ceilDiv(outBytes, stream);
  const int64_t residual = p.hasResidual ? drain : 0;
  const int64_t block = std::max(steps * step + residual, drain);
  const int64_t perTile = ceilDiv(blocks, tiles) * block + drain;
  // DDR through the interface tiles of the columns the site spans.
  const int64_t columns = ceilDiv(tiles, array.rows());
  const int64_t inBytes = blocks * (steps * (aBytes + bBytes) +
                                    (p.hasResidual ? outBytes : 0));
  const int64_t shimIn =
      ceilDiv(inBytes, columns * array.shim_in_channels() * stream);
  const int64_t shimOut =
      ceilDiv(blocks * outBytes, columns * array.shim_out_channels() * stream);
  return array.setup_cycles() + std::max({perTile, shimIn, shimOut});
}

absl::Status checkPlanFits(const v1::AiePlan &plan, const v1::AieArray &array) {
  if (plan.array().name() != array.name())
    return absl::FailedPreconditionError(absl::StrCat(
        "the plan is for AI Engine array '", plan.array().name(),
        "', this device's array is '", array.name(), "'"));
  const int64_t total = int64_t(array.columns()) * array.rows();
  const int64_t memory = array.data_memory_bytes() - array.reserved_bytes();
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const v1::AieSite &site : plan.sites()) {
    auto where = [&] {
      return absl::StrCat("AI Engine site ", site.index(), " (", site.kind(), ")");
    };
    auto products = siteProducts(
        site.kind(), std::span<const int64_t>(site.geometry().data(),
                                              site.geometry().size()));
    if (!products.ok())
      return absl::InvalidArgumentError(
          absl::StrCat(where(), ": ", products.status().message()));
    if (site.tiles() < 1 || site.first_tile() < 0 ||
        int64_t(site.first_tile()) + site.tiles() > total)
      return absl::FailedPreconditionError(absl::StrCat(
          where(), " is placed on tiles [", site.first_tile(), ", ",
          int64_t(site.first_tile()) + site.tiles(), "); the array has ",
          total, " tiles"));
    if (site.block_m() < 1 || site.block_n() < 1 || site.block_k() < 1 ||
        site.block_m() > kMaxBlock || site.block_n() > kMaxBlock ||
        site.block_k() > kMaxBlock)
      return absl::InvalidArgumentError(absl::StrCat(
          where(), " has block ", site.block_m(), "x", site.block_n(), "x",
          site.block_k()));
    if (site.estimated_cycles() < 0 || site.estimated_cycles() > kMaxMacs)
      return absl::InvalidArgumentError(absl::StrCat(
          where(), " estimates ", site.estimated_cycles(), " cycles"));
    int64_t bytes = blockMemoryBytes(*products, site.block_m(), site.block_n(),
                                     site.block_k());
    if (bytes > memory)
      return absl::FailedPreconditionError(absl::StrCat(
          where(), " needs ", bytes, " bytes of data memory per tile; a tile has ",
          memory, " (", array.data_memory_bytes(), " less ",
          array.reserved_bytes(), " of stack and heap)"));
    if (site.dma_in_channels() > array.dma_in_channels() ||
        site.dma_out_channels() > array.dma_out_channels())
      return absl::FailedPreconditionError(absl::StrCat(
          where(), " uses ", site.dma_in_channels(), " input and ",
          site.dma_out_channels(), " output DMA channels per tile; a tile has ",
          array.dma_in_channels(), " and ", array.dma_out_channels()));
    spans.emplace_back(site.first_tile(), int64_t(site.first_tile()) + site.tiles());
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].second)
      return absl::FailedPreconditionError(absl::StrCat(
          "two AI Engine sites share tile ", spans[i].first,
          ": each tile holds one kernel (16 KiB of program memory)"));
  return absl::OkStatus();
}

} // namespace kiln::aie
