//===- AtenToKernelCalls.cpp - the kiln-convert-aten-to-kernel-calls pass -===//
//
// This file implements the pass that replaces f32 convolutions by calls to
// the kernel library the cpu agent installs in every artifact it loads
// (compiler/runtime/kiln_rt_kernels.h). The call takes raw pointers: the
// operands are turned into identity-layout buffers (bufferization copies a
// strided view into a fresh buffer first), so each pointer is the start of
// a dense row-major tensor.
//
//===----------------------------------------------------------------------===//
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/IR/SymbolTable.h"

#include "../../../runtime/kiln_rt_kernels.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTATENTOKERNELCALLS
#include "kiln/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kConvolutionCall = "kiln_rt_convolution_f32";

bool isF32(Type type) {
  return cast<RankedTensorType>(type).getElementType().isF32();
}

bool hasEmptyExtent(Type type) {
  return llvm::is_contained(cast<RankedTensorType>(type).getShape(), 0);
}

/// True when the kernel library computes `op` exactly as the generated code
/// would (f32 throughout, forward, 1-3 spatial dims, nothing empty).
bool isLibraryConvolution(kiln::aten::ConvolutionOp op) {
  SmallVector<Value> tensors = {op.getInput(), op.getWeight(), op.getResult()};
  if (Value bias = op.getBias())
    tensors.push_back(bias);
  for (Value tensor : tensors)
    if (!isF32(tensor.getType()) || hasEmptyExtent(tensor.getType()))
      return false;
  int64_t spatial = op.getType().getRank() - 2;
  return !op.getTransposed() && spatial >= 1 && spatial <= 3;
}

/// The call site's kiln_rt_convolution, field by field.
SmallVector<int64_t> convolutionGeometry(kiln::aten::ConvolutionOp op) {
  auto input = cast<RankedTensorType>(op.getInput().getType()).getShape();
  auto weight = cast<RankedTensorType>(op.getWeight().getType()).getShape();
  auto output = op.getType().getShape();
  int64_t spatial = output.size() - 2;
  kiln_rt_convolution g{};
  g.spatial_rank = spatial;
  g.batch = input[0];
  g.in_channels = input[1];
  g.out_channels = output[1];
  g.groups = op.getGroups();
  g.has_bias = op.getBias() ? 1 : 0;
  for (int64_t i = 0; i < 3; ++i) {
    bool used = i < spatial;
    g.input[i] = used ? input[2 + i] : 1;
    g.kernel[i] = used ? weight[2 + i] : 1;
    g.output[i] = used ? output[2 + i] : 1;
    g.stride[i] = used ? op.getStride()[i] : 1;
    g.pad_begin[i] = used ? op.getPadding()[i] : 0;
    g.pad_end[i] = used ? op.getPadding()[i] : 0;
    g.dilation[i] = used ? op.getDilation()[i] : 1;
  }
  const auto *fields = reinterpret_cast<const int64_t *>(&g);
  return SmallVector<int64_t>(fields, fields + KILN_RT_CONVOLUTION_FIELDS);
}

struct ConvertAtenToKernelCallsPass
    : kiln::impl::ConvertAtenToKernelCallsBase<ConvertAtenToKernelCallsPass> {
  using ConvertAtenToKernelCallsBase::ConvertAtenToKernelCallsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (library != "onednn") {
      module.emitError() << "unknown kernel library '" << library
                         << "' (known: onednn)";
      return signalPassFailure();
    }
    SmallVector<kiln::aten::ConvolutionOp> convolutions;
    module.walk([&](kiln::aten::ConvolutionOp op) {
      if (isLibraryConvolution(op))
        convolutions.push_back(op);
    });
    if (convolutions.empty())
      return;
    SymbolTable symbols(module);
    func::FuncOp callee = declareConvolution(module, symbols);
    for (kiln::aten::ConvolutionOp op : convolutions)
      rewrite(op, callee, symbols);
  }

  /// `void kiln_rt_convolution_f32(ptr geometry, ptr state, ptr input,
  /// ptr weight, ptr bias, ptr output)`.
  func::FuncOp declareConvolution(ModuleOp module, SymbolTable &symbols) {
    if (auto existing = symbols.lookup<func::FuncOp>(kConvolutionCall))
      return existing;
    auto ptr = LLVM::LLVMPointerType::get(&getContext());
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    auto callee = builder.create<func::FuncOp>(
        module.getLoc(), kConvolutionCall,
        builder.getFunctionType(SmallVector<Type>(6, ptr), {}));
    callee.setPrivate();
    symbols.insert(callee);
    return callee;
  }

  /// A private global of `type` named after `stem`, unique in the module.
  memref::GlobalOp addGlobal(SymbolTable &symbols, Location loc,
                             StringRef stem, MemRefType type,
                             DenseElementsAttr value, bool constant) {
    ModuleOp module = getOperation();
    OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
    auto global = builder.create<memref::GlobalOp>(
        loc, stem, builder.getStringAttr("private"), type, value, constant,
        /*alignment=*/builder.getI64IntegerAttr(8));
    symbols.insert(global); // Renames it when `stem` is taken.
    return global;
  }

  /// The address of `buffer`'s first element as an !llvm.ptr.
  Value pointerTo(OpBuilder &b, Location loc, Value buffer) {
    Value index = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer);
    Value address = b.create<arith::IndexCastOp>(loc, b.getI64Type(), index);
    return b.create<LLVM::IntToPtrOp>(
        loc, LLVM::LLVMPointerType::get(b.getContext()), address);
  }

  /// `tensor` as a dense row-major buffer the call only reads.
  Value readOnlyBuffer(OpBuilder &b, Location loc, Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    auto buffer = MemRefType::get(type.getShape(), type.getElementType());
    return b.create<bufferization::ToMemrefOp>(loc, buffer, tensor,
                                               /*read_only=*/true);
  }

  void rewrite(kiln::aten::ConvolutionOp op, func::FuncOp callee,
               SymbolTable &symbols) {
    Location loc = op.getLoc();
    OpBuilder b(op);
    SmallVector<int64_t> geometry = convolutionGeometry(op);
    auto geometryType = MemRefType::get(
        {static_cast<int64_t>(geometry.size())}, b.getI64Type());
    memref::GlobalOp geometryGlobal = addGlobal(
        symbols, loc, "__kiln_convolution", geometryType,
        DenseElementsAttr::get(
            RankedTensorType::get(geometryType.getShape(), b.getI64Type()),
            ArrayRef<int64_t>(geometry)),
        /*constant=*/true);
    auto stateType = MemRefType::get({1}, b.getI64Type());
    memref::GlobalOp stateGlobal = addGlobal(
        symbols, loc, "__kiln_convolution_state", stateType,
        DenseElementsAttr::get(
            RankedTensorType::get({1}, b.getI64Type()), int64_t(0)),
        /*constant=*/false);

    Value input = readOnlyBuffer(b, loc, op.getInput());
    Value weight = readOnlyBuffer(b, loc, op.getWeight());
    RankedTensorType resultType = op.getType();
    Value output = b.create<memref::AllocOp>(
        loc, MemRefType::get(resultType.getShape(), resultType.getElementType()),
        b.getI64IntegerAttr(64));
    // Without a bias the library ignores the pointer: pass the output's.
    Value bias = op.getBias() ? readOnlyBuffer(b, loc, op.getBias()) : output;
    Value geometryBuffer = b.create<memref::GetGlobalOp>(
        loc, geometryType, geometryGlobal.getSymName());
    Value stateBuffer = b.create<memref::GetGlobalOp>(
        loc, stateType, stateGlobal.getSymName());
    b.create<func::CallOp>(
        loc, callee,
        ValueRange{pointerTo(b, loc, geometryBuffer),
                   pointerTo(b, loc, stateBuffer), pointerTo(b, loc, input),
                   pointerTo(b, loc, weight), pointerTo(b, loc, bias),
                   pointerTo(b, loc, output)});
    Value result = b.create<bufferization::ToTensorOp>(
        loc, resultType, output, /*restrict=*/true, /*writable=*/true);
    op.replaceAllUsesWith(result);
    op.erase();
  }
};

} // namespace
