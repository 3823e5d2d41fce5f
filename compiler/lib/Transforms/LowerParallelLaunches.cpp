//===- LowerParallelLaunches.cpp - the kiln-lower-parallel-launches pass --===//
//
// This file implements the lowering of the launch calls that
// kiln-outline-parallel-loops leaves into kiln_rt_parallel_for calls with a
// task trampoline and a stack context, on the LLVM dialect.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_LOWERPARALLELLAUNCHES
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kParallelFor = "kiln_rt_parallel_for";

struct LowerParallelLaunchesPass
    : kiln::impl::LowerParallelLaunchesBase<LowerParallelLaunchesPass> {
  using LowerParallelLaunchesBase::LowerParallelLaunchesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> launches;
    for (auto function : module.getOps<LLVM::LLVMFuncOp>())
      if (function->hasAttr(kiln::kParallelBodyAttrName))
        launches.push_back(function);
    if (launches.empty())
      return;
    LLVM::LLVMFuncOp parallelFor = declareParallelFor(module);
    for (LLVM::LLVMFuncOp launch : launches)
      if (failed(lower(module, launch, parallelFor)))
        return signalPassFailure();
  }

  /// `void kiln_rt_parallel_for(ptr task, ptr context, i64 count)`.
  LLVM::LLVMFuncOp declareParallelFor(ModuleOp module) {
    if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(kParallelFor))
      return existing;
    MLIRContext *context = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(context);
    auto type = LLVM::LLVMFunctionType::get(
        LLVM::LLVMVoidType::get(context),
        {ptr, ptr, IntegerType::get(context, 64)});
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    return builder.create<LLVM::LLVMFuncOp>(module.getLoc(), kParallelFor,
                                            type);
  }

  LogicalResult lower(ModuleOp module, LLVM::LLVMFuncOp launch,
                      LLVM::LLVMFuncOp parallelFor) {
    MLIRContext *context = &getContext();
    auto bodyName = launch->getAttrOfType<FlatSymbolRefAttr>(kiln::kParallelBodyAttrName);
    auto body = bodyName ? module.lookupSymbol<LLVM::LLVMFuncOp>(bodyName)
                         : LLVM::LLVMFuncOp();
    if (!body || body.isExternal())
      return launch.emitOpError("names no parallel body function");
    auto i64 = IntegerType::get(context, 64);
    auto ptr = LLVM::LLVMPointerType::get(context);
    ArrayRef<Type> launchParams = launch.getFunctionType().getParams();
    ArrayRef<Type> bodyParams = body.getFunctionType().getParams();
    if (launchParams.empty() || launchParams.front() != i64 ||
        bodyParams.size() != launchParams.size() + 1 ||
        bodyParams[0] != i64 || bodyParams[1] != i64 ||
        bodyParams.drop_front(2) != launchParams.drop_front())
      return launch.emitOpError("does not match its parallel body @")
             << body.getSymName()
             << ": expected launch(i64 count, live-ins...) and "
                "body(i64 begin, i64 end, live-ins...)";
    ArrayRef<Type> liveInTypes = launchParams.drop_front();
    auto contextType = LLVM::LLVMStructType::getLiteral(context, liveInTypes);
    body.setLinkage(LLVM::Linkage::Internal);

    // void @<body>_task(ptr context, i64 begin, i64 end)
    OpBuilder builder(context);
    builder.setInsertionPointAfter(body);
    Location loc = body.getLoc();
    auto task = builder.create<LLVM::LLVMFuncOp>(
        loc, (body.getSymName() + "_task").str(),
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                    {ptr, i64, i64}),
        LLVM::Linkage::Internal);
    Block *entry = task.addEntryBlock(builder);
    builder.setInsertionPointToStart(entry);
    SmallVector<Value> arguments = {entry->getArgument(1),
                                    entry->getArgument(2)};
    for (auto [i, type] : llvm::enumerate(liveInTypes)) {
      Value field = builder.create<LLVM::GEPOp>(
          loc, ptr, contextType, entry->getArgument(0),
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
      arguments.push_back(builder.create<LLVM::LoadOp>(loc, type, field));
    }
    builder.create<LLVM::CallOp>(loc, body, arguments);
    builder.create<LLVM::ReturnOp>(loc, ValueRange{});

    // Each call: fill a stack context, then hand the task to the runtime.
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(launch, module);
    if (!uses)
      return launch.emitOpError("has uses that are not symbol references");
    SmallVector<LLVM::CallOp> calls;
    for (const SymbolTable::SymbolUse &use : *uses) {
      auto call = dyn_cast<LLVM::CallOp>(use.getUser());
      if (!call)
        return use.getUser()->emitOpError(
            "uses a parallel launch other than by calling it");
      calls.push_back(call);
    }
    for (LLVM::CallOp call : calls) {
      auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
      // The slot lives in the caller's entry block: one per call site, not
      // one per loop iteration of the caller.
      OpBuilder atEntry = OpBuilder::atBlockBegin(&caller.getBody().front());
      Value one = atEntry.create<LLVM::ConstantOp>(call.getLoc(), i64,
                                                   atEntry.getI64IntegerAttr(1));
      Value slot = atEntry.create<LLVM::AllocaOp>(call.getLoc(), ptr,
                                                  contextType, one);
      OpBuilder at(call);
      for (auto [i, value] : llvm::enumerate(call.getArgOperands().drop_front())) {
        Value field = at.create<LLVM::GEPOp>(
            call.getLoc(), ptr, contextType, slot,
            ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
        at.create<LLVM::StoreOp>(call.getLoc(), value, field);
      }
      Value taskAddress =
          at.create<LLVM::AddressOfOp>(call.getLoc(), ptr, task.getSymName());
      at.create<LLVM::CallOp>(
          call.getLoc(), parallelFor,
          ValueRange{taskAddress, slot, call.getArgOperands().front()});
      call.erase();
    }
    launch.erase();
    return success();
  }
};

} // namespace
