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
  for (int64_t bm : kBlockSides) {
    if (bm > roundUp8(p.m) && bm != kBlockSides[0])
      continue;
    for (int64_t bn : kBlockSides) {
      if (bn > roundUp8(p.n) && bn != kBlockSides[0])
        continue;
      for (int64_t bk : kBlockDepths) {
        if (bk > roundUp8(p.k) && bk != kBlockDepths[0])
          continue;
        if (aie::blockMemoryBytes(bm, bn, bk, p.hasResidual) > memory)
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

/// Tiles per site: one each, the `extra` rest in proportion to MACs, no
/// site getting more tiles than it has blocks.
std::vector<int64_t> shareTiles(const std::vector<int64_t> &macs,
                                const std::vector<int64_t> &blocks,
                                int64_t extra) {
  const size_t n = macs.size();
  std::vector<int64_t> tiles(n, 1);
  // Water-filling: share among sites below their cap, clamp, repeat.
  for (size_t round = 0; round < n && extra > 0; ++round) {
    double weight = 0;
    for (size_t i = 0; i < n; ++i)
      if (tiles[i] < blocks[i])
        weight += double(macs[i]);
    if (weight <= 0)
      break;
    int64_t given = 0;
    for (size_t i = 0; i < n; ++i) {
      if (tiles[i] >= blocks[i])
        continue;
      int64_t share = int64_t(double(extra) * double(macs[i]) / weight);
      share = std::min(share, blocks[i] - tiles[i]);
      tiles[i] += share;
      given += share;
    }
    extra -= given;
    if (given == 0)
      break;
  }
  // What rounding left: one at a time to the site with most MACs per tile.
  while (extra > 0) {
    size_t pick = n;
    for (size_t i = 0; i < n; ++i)
      if (tiles[i] < blocks[i] &&
          (pick == n || double(macs[i]) / double(tiles[i]) >
                            double(macs[pick]) / double(tiles[pick])))
        pick = i;
    if (pick == n)
      break;
    ++tiles[pick];
    --extra;
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
  std::vector<int64_t> macs, blocks;
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
    site.set_tile_memory_bytes(aie::blockMemoryBytes(
        site.block_m(), site.block_n(), site.block_k(), p.hasResidual));
    // A and B slices on the two input channels (a residual follows B's),
    // results out on one.
    site.set_dma_in_channels(2);
    site.set_dma_out_channels(1);
    site.set_macs(p.problems * p.m * p.n * p.k);
    macs.push_back(site.macs());
    blocks.push_back(p.problems * ((p.m + site.block_m() - 1) / site.block_m()) *
                     ((p.n + site.block_n() - 1) / site.block_n()));
    products.push_back(p);
  }

  std::vector<int64_t> shares =
      shareTiles(macs, blocks, available - int64_t(sites.size()));
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
