//===- OutlineParallelLoops.cpp - the kiln-outline-parallel-loops pass ----===//
//
// This file implements the outlining of worthwhile outermost scf.parallel
// loops into task functions that the runtime's thread pool runs.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <cctype>

namespace kiln {
#define GEN_PASS_DEF_OUTLINEPARALLELLOOPS
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Iterations of dimension `dim` of `loop`, when its bounds are constant.
/// An upper bound below the lower one is 0 iterations (constantTripCount
/// says negative, and two negatives would multiply into a wrong positive).
std::optional<int64_t> tripCount(scf::ParallelOp loop, unsigned dim) {
  std::optional<int64_t> count =
      constantTripCount(loop.getLowerBound()[dim], loop.getUpperBound()[dim],
                        loop.getStep()[dim]);
  if (!count)
    return std::nullopt;
  return std::max<int64_t>(*count, 0);
}

double blockCost(Block &block);

/// The graph node a loop came from (the importer names ops after their
/// node), as a symbol suffix: profiles then name the op each task runs.
std::string nodeSuffix(Location loc) {
  std::string name;
  if (auto named = dyn_cast<NameLoc>(loc))
    name = named.getName().str();
  else if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (auto named = dyn_cast<NameLoc>(inner)) {
        name = named.getName().str();
        break;
      }
  std::string suffix;
  for (char c : name.substr(0, 48))
    suffix += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return suffix.empty() ? "" : "_" + suffix;
}

/// Estimated operations one execution of `op` performs: loops with constant
/// bounds count their body once per iteration, others once.
double operationCost(Operation &op) {
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    std::optional<int64_t> trips = constantTripCount(
        loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
    return 1 + static_cast<double>(trips.value_or(1)) *
                   blockCost(*loop.getBody());
  }
  if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
    double trips = 1;
    for (unsigned dim = 0; dim < loop.getNumLoops(); ++dim)
      trips *= static_cast<double>(tripCount(loop, dim).value_or(1));
    return 1 + trips * blockCost(*loop.getBody());
  }
  double cost = 1;
  for (Region &region : op.getRegions())
    for (Block &block : region)
      cost += blockCost(block);
  return cost;
}

double blockCost(Block &block) {
  double cost = 0;
  for (Operation &op : block)
    cost += operationCost(op);
  return cost;
}

/// How a loop would run in parallel: its leading `collapsed` dimensions,
/// `iterations` of them together, out of `work` estimated operations.
struct ParallelPlan {
  scf::ParallelOp loop;
  unsigned collapsed = 0;
  int64_t iterations = 0;
  double work = 0;
};

/// A memref live-in passed as its base buffer and dynamic metadata.
struct ExpandedMemRef {
  MemRefType type;
  int64_t staticOffset;
  SmallVector<int64_t> staticSizes, staticStrides;
};

struct OutlineParallelLoopsPass
    : kiln::impl::OutlineParallelLoopsBase<OutlineParallelLoopsPass> {
  using OutlineParallelLoopsBase::OutlineParallelLoopsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::FuncOp, SmallVector<ParallelPlan>>> work;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isDeclaration())
        continue;
      SmallVector<ParallelPlan> plans;
      collect(function.getBody(), plans);
      if (!plans.empty())
        work.emplace_back(function, std::move(plans));
    }
    SymbolTable symbols(module);
    for (auto &[function, plans] : work) {
      unsigned index = 0;
      for (ParallelPlan &plan : plans)
        if (failed(outline(symbols, function, plan, index++)))
          return signalPassFailure();
    }
  }

  /// The plan for `loop`, with `collapsed` = 0 when it cannot run in
  /// parallel at all (results, or non-constant leading bounds).
  ParallelPlan plan(scf::ParallelOp loop) {
    ParallelPlan plan;
    plan.loop = loop;
    if (loop.getNumResults() != 0)
      return plan;
    unsigned loops = loop.getNumLoops();
    unsigned mostCollapsed = loops > 1 ? loops - 1 : 1;
    int64_t iterations = 1;
    for (unsigned dim = 0; dim < mostCollapsed; ++dim) {
      std::optional<int64_t> trips = tripCount(loop, dim);
      if (!trips)
        break;
      iterations *= *trips;
      plan.collapsed = dim + 1;
      plan.iterations = iterations;
      if (iterations >= minTripCount)
        break;
    }
    plan.work = operationCost(*loop.getOperation());
    return plan;
  }

  /// Appends to `plans` the loops of `region` to outline, outermost first,
  /// and returns the estimated work (per execution of `region`) they cover.
  double collect(Region &region, SmallVectorImpl<ParallelPlan> &plans) {
    double covered = 0;
    for (Block &block : region)
      for (Operation &op : block) {
        if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
          covered += collectLoop(loop, plans);
          continue;
        }
        double executions = 1;
        if (auto serial = dyn_cast<scf::ForOp>(op))
          executions = static_cast<double>(
              constantTripCount(serial.getLowerBound(), serial.getUpperBound(),
                                serial.getStep())
                  .value_or(1));
        for (Region &nested : op.getRegions())
          covered += executions * collect(nested, plans);
      }
    return covered;
  }

  /// A loop with enough iterations is outlined. One with few (2 up to
  /// min-trip-count) gives way to the parallel loops nested in it, unless
  /// they cover less than half its work (a matmul's two column panels hold
  /// its compute; the panel copy nested in them does not).
  double collectLoop(scf::ParallelOp loop,
                     SmallVectorImpl<ParallelPlan> &plans) {
    ParallelPlan candidate = plan(loop);
    bool worthwhile = candidate.collapsed > 0 && candidate.work >= minWork;
    if (worthwhile && candidate.iterations >= minTripCount) {
      plans.push_back(candidate);
      return candidate.work;
    }
    size_t before = plans.size();
    double executions = 1;
    for (unsigned dim = 0; dim < loop.getNumLoops(); ++dim)
      executions *= static_cast<double>(tripCount(loop, dim).value_or(1));
    double nested = executions * collect(loop.getRegion(), plans);
    if (worthwhile && candidate.iterations >= 2 &&
        nested < 0.5 * candidate.work) {
      plans.truncate(before);
      plans.push_back(candidate);
      return candidate.work;
    }
    return nested;
  }

  /// Whether `value` can be cloned into the body instead of passed.
  static bool isRematerializable(Value value) {
    Operation *op = value.getDefiningOp();
    return op && op->getNumResults() == 1 && op->getNumRegions() == 0 &&
           matchPattern(value, m_Constant());
  }

  LogicalResult outline(SymbolTable &symbols, func::FuncOp function,
                        ParallelPlan &plan, unsigned index) {
    scf::ParallelOp loop = plan.loop;
    Location loc = loop.getLoc();
    MLIRContext *context = &getContext();
    unsigned collapsed = plan.collapsed;

    // Values the body and the inner dimensions' bounds use from outside.
    llvm::SetVector<Value> liveIns;
    getUsedValuesDefinedAbove(loop.getRegion(), liveIns);
    for (unsigned dim = collapsed; dim < loop.getNumLoops(); ++dim)
      for (Value bound : {loop.getLowerBound()[dim], loop.getUpperBound()[dim],
                          loop.getStep()[dim]})
        liveIns.insert(bound);
    for (unsigned dim = 0; dim < collapsed; ++dim)
      for (Value bound : {loop.getLowerBound()[dim], loop.getStep()[dim]})
        liveIns.insert(bound);

    // Call-site arguments; memrefs that are not bare-pointer compatible are
    // passed as base buffer plus dynamic metadata.
    OpBuilder builder(loop);
    SmallVector<Value> arguments;
    SmallVector<Value> passed, cloned;
    DenseMap<Value, ExpandedMemRef> expanded;
    DenseMap<Value, unsigned> firstArgument;
    for (Value value : liveIns) {
      if (isRematerializable(value)) {
        cloned.push_back(value);
        continue;
      }
      passed.push_back(value);
      firstArgument[value] = arguments.size();
      auto type = dyn_cast<MemRefType>(value.getType());
      if (!type || (type.getLayout().isIdentity() && type.hasStaticShape())) {
        arguments.push_back(value);
        continue;
      }
      ExpandedMemRef memref{type, 0, {}, {}};
      if (failed(getStridesAndOffset(type, memref.staticStrides,
                                     memref.staticOffset)))
        return loop.emitOpError("live-in ")
               << value << " has a layout that is not strided";
      memref.staticSizes.assign(type.getShape().begin(),
                                type.getShape().end());
      auto metadata =
          builder.create<memref::ExtractStridedMetadataOp>(loc, value);
      arguments.push_back(metadata.getBaseBuffer());
      if (ShapedType::isDynamic(memref.staticOffset))
        arguments.push_back(metadata.getOffset());
      for (auto [size, dynamic] :
           llvm::zip(metadata.getSizes(), memref.staticSizes))
        if (ShapedType::isDynamic(dynamic))
          arguments.push_back(size);
      for (auto [stride, dynamic] :
           llvm::zip(metadata.getStrides(), memref.staticStrides))
        if (ShapedType::isDynamic(dynamic))
          arguments.push_back(stride);
      expanded[value] = std::move(memref);
    }

    // The body: func @<function>_parallel<N>(begin, end, arguments...).
    std::string bodyName =
        (function.getSymName() + "_parallel" + Twine(index) + nodeSuffix(loc))
            .str();
    Type indexType = builder.getIndexType();
    SmallVector<Type> bodyTypes = {indexType, indexType};
    SmallVector<Type> launchTypes = {indexType};
    for (Value argument : arguments) {
      bodyTypes.push_back(argument.getType());
      launchTypes.push_back(argument.getType());
    }
    OpBuilder moduleBuilder(context);
    moduleBuilder.setInsertionPointAfter(function);
    auto body = moduleBuilder.create<func::FuncOp>(
        loc, bodyName, moduleBuilder.getFunctionType(bodyTypes, {}));
    body.setPrivate();
    symbols.insert(body);
    auto launch = moduleBuilder.create<func::FuncOp>(
        loc, body.getSymName().str() + "_launch",
        moduleBuilder.getFunctionType(launchTypes, {}));
    launch.setPrivate();
    launch->setAttr(kiln::kParallelBodyAttrName,
                    FlatSymbolRefAttr::get(body.getSymNameAttr()));
    symbols.insert(launch);

    Block *entry = body.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockBegin(entry);
    IRMapping mapping;
    for (Value value : cloned)
      mapping.map(value, b.clone(*value.getDefiningOp())->getResult(0));
    auto argument = [&](unsigned i) { return entry->getArgument(2 + i); };
    for (Value value : passed) {
      unsigned first = firstArgument[value];
      auto it = expanded.find(value);
      if (it == expanded.end()) {
        mapping.map(value, argument(first));
        continue;
      }
      const ExpandedMemRef &memref = it->second;
      unsigned next = first + 1;
      auto mixed = [&](int64_t staticValue) -> OpFoldResult {
        if (ShapedType::isDynamic(staticValue))
          return argument(next++);
        return b.getIndexAttr(staticValue);
      };
      OpFoldResult offset = mixed(memref.staticOffset);
      SmallVector<OpFoldResult> sizes, strides;
      for (int64_t size : memref.staticSizes)
        sizes.push_back(mixed(size));
      for (int64_t stride : memref.staticStrides)
        strides.push_back(mixed(stride));
      mapping.map(value, b.create<memref::ReinterpretCastOp>(
                             loc, memref.type, argument(first), offset, sizes,
                             strides));
    }

    // for %t = begin to end: delinearize %t over the collapsed dimensions.
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    auto serial = b.create<scf::ForOp>(loc, entry->getArgument(0),
                                       entry->getArgument(1), one);
    b.setInsertionPointToStart(serial.getBody());
    Value linear = serial.getInductionVar();
    for (int dim = static_cast<int>(collapsed) - 1; dim >= 0; --dim) {
      Value position = linear;
      if (dim > 0) {
        Value trips = b.create<arith::ConstantIndexOp>(
            loc, *tripCount(loop, static_cast<unsigned>(dim)));
        position = b.create<arith::RemUIOp>(loc, linear, trips);
        linear = b.create<arith::DivUIOp>(loc, linear, trips);
      }
      Value lower = mapping.lookupOrDefault(loop.getLowerBound()[dim]);
      Value step = mapping.lookupOrDefault(loop.getStep()[dim]);
      Value scaled = b.create<arith::MulIOp>(loc, position, step);
      mapping.map(loop.getInductionVars()[dim],
                  b.create<arith::AddIOp>(loc, lower, scaled).getResult());
    }
    auto cloneBody = [&](OpBuilder &into) {
      for (Operation &op : loop.getBody()->without_terminator())
        into.clone(op, mapping);
    };
    if (collapsed < loop.getNumLoops()) {
      SmallVector<Value> lowers, uppers, steps;
      for (unsigned dim = collapsed; dim < loop.getNumLoops(); ++dim) {
        lowers.push_back(mapping.lookupOrDefault(loop.getLowerBound()[dim]));
        uppers.push_back(mapping.lookupOrDefault(loop.getUpperBound()[dim]));
        steps.push_back(mapping.lookupOrDefault(loop.getStep()[dim]));
      }
      b.create<scf::ParallelOp>(
          loc, lowers, uppers, steps,
          [&](OpBuilder &inner, Location, ValueRange ivs) {
            for (auto [i, iv] : llvm::enumerate(ivs))
              mapping.map(loop.getInductionVars()[collapsed + i], iv);
            cloneBody(inner);
          });
    } else {
      cloneBody(b);
    }
    b.setInsertionPointToEnd(entry);
    b.create<func::ReturnOp>(loc);

    // The call site: launch(iterations, arguments...).
    SmallVector<Value> launchArguments = {
        builder.create<arith::ConstantIndexOp>(loc, plan.iterations)};
    launchArguments.append(arguments.begin(), arguments.end());
    builder.create<func::CallOp>(loc, launch, launchArguments);
    loop.erase();
    return success();
  }
};

} // namespace
