//===- AtenToKernelCalls.cpp - the kiln-convert-aten-to-kernel-calls pass -===//
//
// This file implements the pass that replaces f32 convolutions and matrix
// products by calls to the kernel library the cpu agent installs in every
// artifact it loads (compiler/runtime/kiln_rt_kernels.h). The call takes raw
// pointers: the operands are turned into identity-layout buffers
// (bufferization copies a strided view into a fresh buffer first), so each
// pointer is the start of a dense row-major tensor. A product operand that
// is a transpose of its last two dims is passed untransposed with a flag:
// nn.Linear's weight reaches the library as the parameter itself.
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
constexpr llvm::StringLiteral kMatmulCall = "kiln_rt_matmul_f32";

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

bool allF32AndNonEmpty(ValueRange tensors) {
  return llvm::all_of(tensors, [](Value tensor) {
    return isF32(tensor.getType()) && !hasEmptyExtent(tensor.getType());
  });
}

/// One operand of a product: the tensor to pass and whether it is stored
/// with its last two dims swapped.
struct ProductOperand {
  Value tensor;
  bool transposed = false;
};

/// `value`, or the input of the aten.permute swapping the last two dims
/// (and keeping the others) that defines it.
ProductOperand productOperand(Value value) {
  auto permute = value.getDefiningOp<kiln::aten::PermuteOp>();
  if (!permute)
    return {value};
  ArrayRef<int64_t> dims = permute.getDims();
  int64_t rank = dims.size();
  if (rank < 2 || dims[rank - 1] != rank - 2 || dims[rank - 2] != rank - 1)
    return {value};
  for (int64_t i = 0; i + 2 < rank; ++i)
    if (dims[i] != i)
      return {value};
  return {permute.getSelf(), true};
}

/// A product the library computes: c = a @ b (+ bias[n]).
struct Product {
  Operation *op;
  ProductOperand a, b;
  Value bias; // null: none
  kiln_rt_matmul geometry{};
};

/// aten.mm, aten.bmm, and aten.addmm with alpha = beta = 1 and a bias of
/// shape (n) or (1, n), all f32 and non-empty.
std::optional<Product> libraryProduct(Operation *op) {
  Product product{op, {}, {}, Value(), {}};
  Value a, b;
  if (auto mm = dyn_cast<kiln::aten::MmOp>(op)) {
    a = mm.getSelf();
    b = mm.getMat2();
  } else if (auto bmm = dyn_cast<kiln::aten::BmmOp>(op)) {
    a = bmm.getSelf();
    b = bmm.getMat2();
  } else if (auto addmm = dyn_cast<kiln::aten::AddmmOp>(op)) {
    if (addmm.getAlpha().convertToDouble() != 1.0 ||
        addmm.getBeta().convertToDouble() != 1.0)
      return std::nullopt;
    a = addmm.getMat1();
    b = addmm.getMat2();
    product.bias = addmm.getSelf();
  } else {
    return std::nullopt;
  }
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<Value> tensors = {a, b, op->getResult(0)};
  if (product.bias)
    tensors.push_back(product.bias);
  if (!allF32AndNonEmpty(tensors))
    return std::nullopt;
  ArrayRef<int64_t> shape = result.getShape();
  int64_t n = shape.back();
  if (product.bias) {
    ArrayRef<int64_t> biasShape =
        cast<RankedTensorType>(product.bias.getType()).getShape();
    bool perColumn = (biasShape.size() == 1 && biasShape[0] == n) ||
                     (biasShape.size() == 2 && biasShape[0] == 1 &&
                      biasShape[1] == n);
    if (!perColumn)
      return std::nullopt;
  }
  ArrayRef<int64_t> aShape = cast<RankedTensorType>(a.getType()).getShape();
  product.a = productOperand(a);
  product.b = productOperand(b);
  kiln_rt_matmul &g = product.geometry;
  g.batch = shape.size() == 3 ? shape[0] : 1;
  g.m = shape[shape.size() - 2];
  g.n = n;
  g.k = aShape.back();
  g.a_transposed = product.a.transposed;
  g.b_transposed = product.b.transposed;
  g.has_bias = product.bias ? 1 : 0;
  return product;
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
    SmallVector<Operation *> products;
    module.walk([&](Operation *op) {
      if (auto convolution = dyn_cast<kiln::aten::ConvolutionOp>(op)) {
        if (isLibraryConvolution(convolution))
          convolutions.push_back(convolution);
      } else if (libraryProduct(op)) {
        products.push_back(op);
      }
    });
    SymbolTable symbols(module);
    for (kiln::aten::ConvolutionOp op : convolutions)
      rewrite(op, declare(module, symbols, kConvolutionCall), symbols);
    // Operands are looked at when each product is rewritten: an earlier
    // rewrite may have replaced one (a product of a product).
    for (Operation *op : products) {
      std::optional<Product> product = libraryProduct(op);
      if (product)
        rewrite(*product, declare(module, symbols, kMatmulCall), symbols);
    }
  }

  /// `void name(ptr geometry, ptr state, ptr operand, ptr operand, ptr bias,
  /// ptr output)`: both entry points take this form.
  func::FuncOp declare(ModuleOp module, SymbolTable &symbols, StringRef name) {
    if (auto existing = symbols.lookup<func::FuncOp>(name))
      return existing;
    auto ptr = LLVM::LLVMPointerType::get(&getContext());
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    auto callee = builder.create<func::FuncOp>(
        module.getLoc(), name,
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
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value input = readOnlyBuffer(b, loc, op.getInput());
    Value weight = readOnlyBuffer(b, loc, op.getWeight());
    Value bias = op.getBias() ? readOnlyBuffer(b, loc, op.getBias()) : Value();
    Value result = emitCall(b, loc, callee, symbols, "__kiln_convolution",
                            convolutionGeometry(op), input, weight, bias,
                            op.getType());
    op.replaceAllUsesWith(result);
    op.erase();
  }

  void rewrite(Product &product, func::FuncOp callee, SymbolTable &symbols) {
    Operation *op = product.op;
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value a = readOnlyBuffer(b, loc, product.a.tensor);
    Value bValue = readOnlyBuffer(b, loc, product.b.tensor);
    Value bias =
        product.bias ? readOnlyBuffer(b, loc, product.bias) : Value();
    const auto *fields = reinterpret_cast<const int64_t *>(&product.geometry);
    Value result = emitCall(
        b, loc, callee, symbols, "__kiln_matmul",
        SmallVector<int64_t>(fields, fields + KILN_RT_MATMUL_FIELDS), a,
        bValue, bias, cast<RankedTensorType>(op->getResult(0).getType()));
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
    // A transpose only the product read is dead now.
    for (ProductOperand operand : {product.a, product.b})
      if (operand.transposed)
        for (Operation *user :
             llvm::make_early_inc_range(operand.tensor.getUsers()))
          if (isa<kiln::aten::PermuteOp>(user) && user->use_empty())
            user->erase();
  }

  /// Calls `callee(geometry, state, first, second, bias, output)` with the
  /// geometry in a new constant global and a new zeroed state slot named
  /// after `stem`, into a fresh buffer of `resultType`; returns the result
  /// as a tensor. Without a bias the library ignores the pointer: the
  /// output's is passed.
  Value emitCall(OpBuilder &b, Location loc, func::FuncOp callee,
                 SymbolTable &symbols, StringRef stem,
                 ArrayRef<int64_t> geometry, Value first, Value second,
                 Value bias, RankedTensorType resultType) {
    auto geometryType = MemRefType::get(
        {static_cast<int64_t>(geometry.size())}, b.getI64Type());
    memref::GlobalOp geometryGlobal = addGlobal(
        symbols, loc, stem, geometryType,
        DenseElementsAttr::get(
            RankedTensorType::get(geometryType.getShape(), b.getI64Type()),
            geometry),
        /*constant=*/true);
    auto stateType = MemRefType::get({1}, b.getI64Type());
    memref::GlobalOp stateGlobal = addGlobal(
        symbols, loc, (stem + "_state").str(), stateType,
        DenseElementsAttr::get(RankedTensorType::get({1}, b.getI64Type()),
                               int64_t(0)),
        /*constant=*/false);
    Value output = b.create<memref::AllocOp>(
        loc, MemRefType::get(resultType.getShape(), resultType.getElementType()),
        b.getI64IntegerAttr(64));
    Value geometryBuffer = b.create<memref::GetGlobalOp>(
        loc, geometryType, geometryGlobal.getSymName());
    Value stateBuffer = b.create<memref::GetGlobalOp>(
        loc, stateType, stateGlobal.getSymName());
    b.create<func::CallOp>(
        loc, callee,
        ValueRange{pointerTo(b, loc, geometryBuffer),
                   pointerTo(b, loc, stateBuffer), pointerTo(b, loc, first),
                   pointerTo(b, loc, second),
                   pointerTo(b, loc, bias ? bias : output),
                   pointerTo(b, loc, output)});
    return b.create<bufferization::ToTensorOp>(loc, resultType, output,
                                               /*restrict=*/true,
                                               /*writable=*/true);
  }
};

} // namespace
