//===- AiePlanner.cpp - kernel call sites onto an AI Engine array ---------===//
#include "AiePlanner.h"

#include "kiln/common/AieArray.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <algorithm>

namespace kiln::compiler::acap {
namespace {

constexpr int64_t kBlockSides[] = {8, 16, 32, 64, 128};
constexpr int64_t kBlockDepths[] = {8, 16, 32, 64, 128, 256};
/// Elements of each stream a chain's block holds. On one tile only the
/// last block's drain depends on the block's size, so the smallest block
/// that keeps the DMA busy is also the fastest; sharing tiles then splits
/// the elements finely.
constexpr int64_t kChainBlock = 256;

int64_t roundUp8(int64_t v) { return (v + 7) / 8 * 8; }

/// The block with the fewest cycles on one tile among those whose memory
/// fits, each side at most the problem's (rounded up to the vector width
/// of 8); false when none fits.
bool chooseBlock(const aie::SiteProducts &p, const v1::AieArray &array,
                 v1::AieSite &site) {
  const int64_t memory = array.data_memory_bytes() - array.reserved_bytes();
  int64_t best = -1;
  v1::AieSite trial = site;
  trial.set_tiles(1);
  if (p.elementwise) {
    site.set_block_m(int32_t(kChainBlock));
    site.set_block_n(1);
    site.set_block_k(1);
    return aie::blockMemoryBytes(p, kChainBlock, 1, 1) <= memory;
  }
  for (int64_t bm : kBlockSides) {
    if (bm > roundUp8(p.m) && bm != kBlockSides[0])
      continue;
    for (int64_t bn : kBlockSides) {
      if (bn > roundUp8(p.n) && bn != kBlockSides[0])
        continue;
      for (int64_t bk : kBlockDepths) {
        if (bk > roundUp8(p.k) && bk != kBlockDepths[0])
          continue;
        if (aie::blockMemoryBytes(p, bm, bn, bk) > memory)
          continue;
        trial.set_block_m(bm);
        trial.set_block_n(bn);
        trial.set_block_k(bk);
        int64_t cycles = aie::siteCycles(p, trial, array);
        if (best < 0 || cycles < best) {
          best = cycles;
          site.set_block_m(bm);
          site.set_block_n(bn);
          site.set_block_k(bk);
        }
      }
    }
  }
  return best >= 0;
}

/// Tiles per site: one each, then the `extra` rest where they cut the
/// most cycles per tile, no site getting more tiles than it has blocks.
/// Sites run one after another, so this cuts the plan's total greedily. A
/// step may take up to a column of tiles at once: within a column the
/// interface tile's DDR channels can bound a site, so one more tile may
/// gain nothing until the site reaches the next column.
std::vector<int64_t> shareTiles(const std::vector<aie::SiteProducts> &products,
                                const v1::AiePlan &plan,
                                const std::vector<int64_t> &blocks,
                                const v1::AieArray &array, int64_t extra) {
  const size_t n = products.size();
  std::vector<int64_t> tiles(n, 1), cycles(n);
  // Copies whose tiles the search varies; the plan's sites stay as they are.
  std::vector<v1::AieSite> trials(plan.sites().begin(), plan.sites().end());
  auto cyclesWith = [&](size_t i, int64_t count) {
    trials[i].set_tiles(int32_t(count));
    return aie::siteCycles(products[i], trials[i], array);
  };
  for (size_t i = 0; i < n; ++i)
    cycles[i] = cyclesWith(i, 1);
  while (extra > 0) {
    size_t pick = n;
    int64_t pickTiles = 0, pickCycles = 0;
    double pickGain = 0;
    for (size_t i = 0; i < n; ++i) {
      int64_t most = std::min({blocks[i], tiles[i] + array.rows(), tiles[i] + extra});
      for (int64_t t = tiles[i] + 1; t <= most; ++t) {
        int64_t c = cyclesWith(i, t);
        double gain = double(cycles[i] - c) / double(t - tiles[i]);
        if (gain > pickGain) {
          pick = i;
          pickTiles = t;
          pickCycles = c;
          pickGain = gain;
        }
      }
    }
    if (pick == n)
      break;
    extra -= pickTiles - tiles[pick];
    tiles[pick] = pickTiles;
    cycles[pick] = pickCycles;
  }
  return tiles;
}

} // namespace

absl::StatusOr<v1::AiePlan> planSites(const std::vector<KernelSite> &sites,
                                      const v1::AieArray &array, int tiles) {
  const int64_t total = int64_t(array.columns()) * array.rows();
  if (tiles < 0 || tiles > total)
    return absl::InvalidArgumentError(absl::StrCat(
        "options.acap.tiles must be 0..", total, " (the tiles of array '",
        array.name(), "'), got ", tiles));
  const int64_t available = tiles == 0 ? total : tiles;
  v1::AiePlan plan;
  *plan.mutable_array() = array;
  plan.set_tiles_available(int32_t(available));
  plan.set_numeric_type(std::string(aie::kNumericType));
  if (int64_t(sites.size()) > available)
    return absl::FailedPreconditionError(absl::StrCat(
        "the AI Engine plan does not fit: the host code has ", sites.size(),
        " kernel call sites and each needs a tile of its own (a tile holds one "
        "kernel), but ", available, " tiles are available (array '",
        array.name(), "' has ", total,
        (tiles == 0 ? "" : "; options.acap.tiles limits the plan"), ")"));

  std::vector<aie::SiteProducts> products;
  std::vector<int64_t> blocks;
  for (size_t i = 0; i < sites.size(); ++i) {
    v1::AieSite &site = *plan.add_sites();
    site.set_index(int32_t(i));
    site.set_kind(sites[i].kind);
    site.mutable_geometry()->Add(sites[i].geometry.begin(), sites[i].geometry.end());
    ASSIGN_OR_RETURN(aie::SiteProducts p,
                     aie::siteProducts(sites[i].kind, sites[i].geometry));
    site.set_problems(p.problems);
    site.set_m(p.m);
    site.set_n(p.n);
    site.set_k(p.k);
    if (!chooseBlock(p, array, site))
      return absl::FailedPreconditionError(absl::StrCat(
          "the AI Engine plan does not fit: site ", i, " (", sites[i].kind,
          ") has no block that fits a tile's ",
          array.data_memory_bytes() - array.reserved_bytes(),
          " bytes of data memory"));
    site.set_tile_memory_bytes(
        aie::blockMemoryBytes(p, site.block_m(), site.block_n(), site.block_k()));
    // A and B slices on the two input channels (a residual follows B's),
    // results out on one; a chain's inputs share the input channels.
    site.set_dma_in_channels(
        p.elementwise ? int32_t(std::min<int64_t>(p.inputs, array.dma_in_channels()))
                      : 2);
    site.set_dma_out_channels(1);
    site.set_macs(p.elementwise ? 0 : p.problems * p.m * p.n * p.k);
    blocks.push_back(p.problems * ((p.m + site.block_m() - 1) / site.block_m()) *
                     ((p.n + site.block_n() - 1) / site.block_n()));
    products.push_back(p);
  }

  std::vector<int64_t> shares = shareTiles(products, plan, blocks, array,
                                           available - int64_t(sites.size()));
  int64_t next = 0, cycles = 0;
  for (int i = 0; i < plan.sites_size(); ++i) {
    v1::AieSite &site = *plan.mutable_sites(i);
    site.set_first_tile(int32_t(next));
    site.set_tiles(int32_t(shares[i]));
    next += shares[i];
    site.set_estimated_cycles(aie::siteCycles(products[i], site, array));
    cycles += site.estimated_cycles();
  }
  plan.set_tiles_used(int32_t(next));
  plan.set_estimated_cycles(cycles);
  RETURN_IF_ERROR(aie::checkPlanFits(plan, array));
  return plan;
}

} // namespace kiln::compiler::acap
