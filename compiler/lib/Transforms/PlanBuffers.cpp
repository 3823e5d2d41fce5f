//===- PlanBuffers.cpp - the kiln-plan-buffers pass -----------------------===//
//
// This file implements buffer planning: a function's static buffers become
// views into one arena at offsets that reuse the bytes of dead buffers, so
// a call allocates once instead of once per buffer.
//
//===----------------------------------------------------------------------===//
#include "BufferBytes.h"
#include "kiln/Transforms/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include "mlir/Interfaces/ViewLikeInterface.h"

#include <algorithm>

namespace kiln {
#define GEN_PASS_DEF_PLANBUFFERS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The arena's alignment, and every buffer's at least: a cache line, and
/// what the widest vectors the code generator uses want.
constexpr int64_t kArenaAlignment = 64;

/// One buffer to place: its allocation, its live range in the body's op
/// order (inclusive) and its bytes.
struct Buffer {
  memref::AllocOp alloc;
  int64_t first = 0, last = 0;
  int64_t bytes = 0, alignment = kArenaAlignment;
  int64_t offset = -1;
};

/// The position in `body` of the last op that uses `value` or anything
/// derived from it (any result of a user, transitively: views, casts,
/// extracted pointers, loop results), counting a use inside a region as
/// its ancestor op in `body`. std::nullopt when the value leaves the body
/// (a terminator of the body, or a store of the value itself).
std::optional<int64_t>
lastUse(Value value, Block &body,
        const llvm::DenseMap<Operation *, int64_t> &position) {
  int64_t last = -1;
  SmallVector<Value> worklist = {value};
  llvm::DenseSet<Value> seen = {value};
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      if (user->getBlock() == &body &&
          user->hasTrait<OpTrait::IsTerminator>())
        return std::nullopt;
      if (isa<memref::StoreOp, LLVM::StoreOp>(user) &&
          use.getOperandNumber() == 0)
        return std::nullopt; // the buffer's address written to memory
      if (isa<memref::DeallocOp>(user))
        return std::nullopt; // freed by someone else already
      Operation *ancestor = body.findAncestorOpInBlock(*user);
      if (!ancestor)
        return std::nullopt;
      last = std::max(last, position.lookup(ancestor));
      // A terminator in a region passes the value to its parent's results
      // (scf.yield out of an scf.if or scf.for).
      Operation *producer = user->hasTrait<OpTrait::IsTerminator>()
                                ? user->getParentOp()
                                : user;
      for (Value result : producer->getResults())
        if (seen.insert(result).second)
          worklist.push_back(result);
    }
  }
  return last;
}

/// Offsets for `buffers` (sorted largest first): each at the lowest
/// aligned offset where it overlaps no placed buffer that is live at the
/// same time. Returns the arena's size.
int64_t placeBuffers(SmallVectorImpl<Buffer> &buffers) {
  llvm::sort(buffers, [](const Buffer &a, const Buffer &b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.first < b.first;
  });
  int64_t arenaBytes = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    Buffer &buffer = buffers[i];
    // The byte ranges taken, while this buffer lives, by those placed.
    SmallVector<std::pair<int64_t, int64_t>> taken;
    for (size_t j = 0; j < i; ++j) {
      const Buffer &other = buffers[j];
      if (other.first <= buffer.last && buffer.first <= other.last)
        taken.push_back({other.offset, other.offset + other.bytes});
    }
    llvm::sort(taken);
    int64_t offset = 0;
    for (auto [begin, end] : taken) {
      if (offset + buffer.bytes <= begin)
        break;
      offset = std::max<int64_t>(offset, llvm::alignTo(end, buffer.alignment));
    }
    buffer.offset = offset;
    arenaBytes = std::max(arenaBytes, offset + buffer.bytes);
  }
  return arenaBytes;
}

struct PlanBuffersPass : kiln::impl::PlanBuffersBase<PlanBuffersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    Block &body = func.getBody().front();
    llvm::DenseMap<Operation *, int64_t> position;
    int64_t next = 0;
    for (Operation &op : body)
      position[&op] = next++;

    SmallVector<Buffer> buffers;
    for (Operation &op : body) {
      auto alloc = dyn_cast<memref::AllocOp>(op);
      if (!alloc)
        continue;
      int64_t bytes = kiln::staticBufferBytes(alloc.getType());
      if (bytes == 0)
        continue;
      std::optional<int64_t> last = lastUse(alloc.getResult(), body, position);
      if (!last)
        continue;
      Buffer buffer;
      buffer.alloc = alloc;
      buffer.first = position[&op];
      buffer.last = std::max(*last, buffer.first);
      buffer.bytes = bytes;
      if (std::optional<uint64_t> wanted = alloc.getAlignment())
        buffer.alignment =
            std::max<int64_t>(kArenaAlignment, static_cast<int64_t>(*wanted));
      buffers.push_back(buffer);
    }
    if (buffers.size() < 2)
      return; // one buffer is one allocation either way
    int64_t arenaBytes = placeBuffers(buffers);
    // Offsets are aligned within the arena: the arena is aligned for all.
    int64_t arenaAlignment = kArenaAlignment;
    for (const Buffer &buffer : buffers)
      arenaAlignment = std::max(arenaAlignment, buffer.alignment);

    OpBuilder builder = OpBuilder::atBlockBegin(&body);
    Location loc = func.getLoc();
    auto arenaType = MemRefType::get({arenaBytes}, builder.getI8Type());
    Value arena = builder.create<memref::AllocOp>(
        loc, arenaType, builder.getI64IntegerAttr(arenaAlignment));
    llvm::DenseMap<Operation *, Value> shiftOf; // planned view -> offset
    for (Buffer &buffer : buffers) {
      builder.setInsertionPoint(buffer.alloc);
      Value offset = builder.create<arith::ConstantIndexOp>(
          buffer.alloc.getLoc(), buffer.offset);
      auto view = builder.create<memref::ViewOp>(
          buffer.alloc.getLoc(), buffer.alloc.getType(), arena, offset,
          ValueRange());
      shiftOf[view] = offset;
      buffer.alloc.replaceAllUsesWith(view.getResult());
      buffer.alloc.erase();
    }
    addShiftsToPointers(arena, shiftOf);
  }

  /// A kernel call's operand is the aligned pointer of its buffer. MLIR
  /// 19's expand-strided-metadata folds the aligned pointer of any view to
  /// its source's, which is wrong for memref.view (its byte shift goes into
  /// the aligned pointer): every call would get the arena's start. So the
  /// pointer of a planned view, or of a view of one (a subview or reshape
  /// keeps the aligned pointer), is spelled out here as the arena's plus
  /// the shift.
  static void addShiftsToPointers(
      Value arena, const llvm::DenseMap<Operation *, Value> &shiftOf) {
    // Each extract to rewrite, with the shifts to add: the planned view's
    // and those of any memref.view between it and the extract (a view of a
    // planned byte buffer moves the aligned pointer too).
    SmallVector<std::pair<memref::ExtractAlignedPointerAsIndexOp,
                          SmallVector<Value>>>
        rewrites;
    arena.getParentBlock()->getParentOp()->walk(
        [&](memref::ExtractAlignedPointerAsIndexOp extract) {
          SmallVector<Value> shifts;
          Value source = extract.getSource();
          while (Operation *op = source.getDefiningOp()) {
            if (Value shift = shiftOf.lookup(op)) {
              shifts.push_back(shift);
              rewrites.push_back({extract, shifts});
              return;
            }
            if (auto view = dyn_cast<memref::ViewOp>(op))
              shifts.push_back(view.getByteShift());
            auto viewLike = dyn_cast<ViewLikeOpInterface>(op);
            if (!viewLike)
              return;
            source = viewLike.getViewSource();
          }
        });
    for (auto &[extract, shifts] : rewrites) {
      OpBuilder builder(extract);
      Value pointer = builder.create<memref::ExtractAlignedPointerAsIndexOp>(
          extract.getLoc(), arena);
      for (Value shift : shifts)
        pointer = builder.create<arith::AddIOp>(extract.getLoc(), pointer, shift);
      extract.replaceAllUsesWith(pointer);
      extract.erase();
    }
  }
};

} // namespace
