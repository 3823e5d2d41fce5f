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
// The ops that follow a call and only post-process its result become its
// epilogue (kiln_rt_epilogue), which the library applies before storing the
// output: a batch norm in eval (a per-channel scale and shift, computed from
// the norm's statistics on C values), a residual add, then an activation
// (hardswish, also as torch.export decomposes it, and gelu; relu only for
// the "aie" library: oneDNN's relu and clamp lose NaNs). Each folded op's
// result is read only by the next folded ops, so nothing else sees an
// intermediate result.
//
// With `elementwise-chains` (the "aie" library), the elementwise chains no
// call absorbed become calls too (ElementwiseChains.h), the largest first,
// while the loader's call sites (`max-calls`: the array's tiles) last.
//
// With channels-last (oneDNN), a convolution's data crosses the call
// channels last, the layout oneDNN's x86-64 kernels compute in: the call
// reads permute(x) and writes y, and the graph reads permute(y) back. The
// permutes are ordinary aten ops; kiln-sink-permutes cancels the pairs
// between one call and the next, so activations stay channels last.
//
//===----------------------------------------------------------------------===//
#include "ElementwiseChains.h"

#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Aten/IR/AtenMatchers.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/IR/SymbolTable.h"

#include <cmath>
#include <cstring>
#include <numeric>

#include "../../../runtime/kiln_rt_kernels.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTATENTOKERNELCALLS
#include "kiln/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kConvolutionCall = "kiln_rt_convolution_f32";
constexpr llvm::StringLiteral kMatmulCall = "kiln_rt_matmul_f32";
constexpr llvm::StringLiteral kElementwiseCall = "kiln_rt_elementwise_f32";
/// Chains with fewer elements stay generated: moving them to the array and
/// back costs more than computing them where they are.
constexpr int64_t kMinChainElements = 64;

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

/// A geometry struct as the int64 array the call site passes (the
/// epilogue's bounds as the bits of their doubles).
template <size_t Fields, typename Geometry>
SmallVector<int64_t> asFields(const Geometry &geometry) {
  static_assert(sizeof(Geometry) == Fields * sizeof(int64_t));
  SmallVector<int64_t> fields(Fields);
  std::memcpy(fields.data(), &geometry, sizeof geometry);
  return fields;
}

/// The only user of `value`, or null.
Operation *soleUser(Value value) {
  return value.hasOneUse() ? *value.getUsers().begin() : nullptr;
}

/// True when `stat` broadcasts against `output` as one value per channel:
/// f32, right-aligned, every extent 1 but the channel dim's.
bool isPerChannel(Value stat, RankedTensorType output, int64_t channelDim) {
  auto type = cast<RankedTensorType>(stat.getType());
  if (!type.getElementType().isF32() || type.getRank() > output.getRank())
    return false;
  int64_t offset = output.getRank() - type.getRank();
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t outDim = d + offset;
    int64_t want = outDim == channelDim ? output.getDimSize(channelDim) : 1;
    if (type.getDimSize(d) != want)
      return false;
  }
  return offset <= channelDim;
}

/// The ops after a call that post-process its result, as the library's
/// epilogue. `ops` are folded in order; the call's result replaces the last.
struct Epilogue {
  kiln_rt_epilogue fields{};
  kiln::aten::PointwiseOp batchNorm; // null: no scale and shift
  Value residual;                    // null: none
  SmallVector<Operation *> ops;
};

/// The activation `op` computes on a tensor of `type`, if the library has
/// it (KILN_RT_ACTIVATION_NONE otherwise); relu only with `relu`.
int64_t activationOf(Operation *op, RankedTensorType type, bool relu) {
  if (!op || op->getNumResults() != 1 || op->getResult(0).getType() != type)
    return KILN_RT_ACTIVATION_NONE;
  if (relu && isa<kiln::aten::ReluOp>(op))
    return KILN_RT_ACTIVATION_RELU;
  if (auto gelu = dyn_cast<kiln::aten::GeluOp>(op)) {
    if (gelu.getApproximate() == "none")
      return KILN_RT_ACTIVATION_GELU;
    if (gelu.getApproximate() == "tanh")
      return KILN_RT_ACTIVATION_GELU_TANH;
  }
  auto pointwise = dyn_cast<kiln::aten::PointwiseOp>(op);
  if (pointwise && pointwise.getFn() == "hardswish" &&
      pointwise.getInputs().size() == 1)
    return KILN_RT_ACTIVATION_HARDSWISH;
  return KILN_RT_ACTIVATION_NONE;
}

/// The ops of hardswish as torch.export decomposes it, from `y`:
/// y * clamp(clamp(y + 3, min=0), max=6) / 6 (one clamp with both bounds
/// too), in the order they run; empty when `y`'s users are not exactly
/// that.
SmallVector<Operation *> decomposedHardswish(Value y, RankedTensorType type) {
  if (!llvm::hasNItems(y.getUses(), 2))
    return {};
  kiln::aten::AddOp add;
  kiln::aten::MulOp mul;
  for (Operation *user : y.getUsers()) {
    if (auto a = dyn_cast<kiln::aten::AddOp>(user))
      add = a;
    else if (auto m = dyn_cast<kiln::aten::MulOp>(user))
      mul = m;
  }
  if (!add || !mul || add.getLhs() != y || !kiln::aten::isFloatSplat(add.getRhs(), 3.0) ||
      add.getAlpha().convertToDouble() != 1.0 || add.getType() != type)
    return {};
  SmallVector<Operation *> ops = {add};
  Value clamped = add.getResult();
  // Exactly clamp(min=0) then clamp(max=6), as torch.export writes it, or
  // one clamp(0, 6): other bounds are another function.
  SmallVector<std::pair<double, double>> bounds;
  while (auto clamp =
             dyn_cast_or_null<kiln::aten::PointwiseOp>(soleUser(clamped))) {
    ArrayRef<double> scalars = clamp.getScalars();
    if (clamp.getFn() != "clamp" || scalars.size() != 2 ||
        clamp.getType() != type || bounds.size() == 2)
      return {};
    bounds.emplace_back(scalars[0], scalars[1]);
    ops.push_back(clamp);
    clamped = clamp.getResult();
  }
  auto is = [](std::pair<double, double> b, double lower, double upper) {
    auto same = [](double a, double e) {
      return std::isnan(e) ? std::isnan(a) : a == e;
    };
    return same(b.first, lower) && same(b.second, upper);
  };
  bool relu6 = (bounds.size() == 1 && is(bounds[0], 0.0, 6.0)) ||
               (bounds.size() == 2 && is(bounds[0], 0.0, NAN) &&
                is(bounds[1], NAN, 6.0));
  if (!relu6 || soleUser(clamped) != mul || mul.getType() != type)
    return {};
  ops.push_back(mul);
  auto div = dyn_cast_or_null<kiln::aten::DivOp>(soleUser(mul.getResult()));
  if (!div || div.getLhs() != mul.getResult() ||
      !kiln::aten::isFloatSplat(div.getRhs(), 6.0) || div.getType() != type)
    return {};
  ops.push_back(div);
  return ops;
}

/// What follows `result` (a call's result with channels in `channelDim`)
/// that the library can apply: [batch norm] [+ residual] [activation],
/// relu among them with `relu`. Ops must sit in `result`'s block.
Epilogue matchEpilogue(Value result, int64_t channelDim, bool relu) {
  Epilogue epilogue;
  auto type = cast<RankedTensorType>(result.getType());
  Block *block = result.getDefiningOp()->getBlock();
  Value current = result;
  auto next = [&]() -> Operation * {
    Operation *user = soleUser(current);
    return user && user->getBlock() == block ? user : nullptr;
  };
  auto norm = dyn_cast_or_null<kiln::aten::PointwiseOp>(next());
  if (norm && norm.getFn() == "batch_norm" && norm.getInputs().size() == 5 &&
      norm.getScalars().size() == 1 && norm.getInputs()[0] == current &&
      norm.getType() == type &&
      llvm::all_of(norm.getInputs().drop_front(), [&](Value stat) {
        return isPerChannel(stat, type, channelDim);
      })) {
    epilogue.batchNorm = norm;
    epilogue.fields.has_scale_shift = 1;
    epilogue.ops.push_back(norm);
    current = norm.getResult();
  }
  auto add = dyn_cast_or_null<kiln::aten::AddOp>(next());
  if (add && add.getAlpha().convertToDouble() == 1.0 && add.getType() == type) {
    Value other = add.getLhs() == current   ? add.getRhs()
                  : add.getRhs() == current ? add.getLhs()
                                            : Value();
    if (other && other != current && other.getType() == type) {
      epilogue.residual = other;
      epilogue.fields.has_residual = 1;
      epilogue.ops.push_back(add);
      current = add.getResult();
    }
  }
  Operation *last = next();
  if (int64_t activation = activationOf(last, type, relu)) {
    epilogue.fields.activation = activation;
    epilogue.ops.push_back(last);
  } else if (SmallVector<Operation *> hardswish =
                 decomposedHardswish(current, type);
             !hardswish.empty() &&
             llvm::all_of(hardswish, [&](Operation *op) {
               return op->getBlock() == block;
             })) {
    epilogue.fields.activation = KILN_RT_ACTIVATION_HARDSWISH;
    epilogue.ops.append(hardswish.begin(), hardswish.end());
  }
  return epilogue;
}

/// The call site's kiln_rt_convolution, field by field.
SmallVector<int64_t> convolutionGeometry(kiln::aten::ConvolutionOp op,
                                         const kiln_rt_epilogue &epilogue,
                                         bool channelsLast) {
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
  g.epilogue = epilogue;
  g.channels_last = channelsLast ? 1 : 0;
  return asFields<KILN_RT_CONVOLUTION_FIELDS>(g);
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
  /// With `transposed`: the transpose, which the call runs when nothing
  /// else reads it.
  kiln::aten::PermuteOp transpose;
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
  return {permute.getSelf(), true, permute};
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
  // The geometry is baked into the call: a symbolic size stays generated code.
  for (Value tensor : tensors)
    if (!cast<RankedTensorType>(tensor.getType()).hasStaticShape())
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
  kiln_rt_matmul &g = product.geometry; // epilogue: set when rewritten
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
    // The same ops go to either library: oneDNN on the cpu agent, the AI
    // Engine array on the acap agent.
    if (library != "onednn" && library != "aie") {
      module.emitError() << "unknown kernel library '" << library
                         << "' (known: onednn, aie)";
      return signalPassFailure();
    }
    if (channelsLast && library != "onednn") {
      module.emitError() << "kernel library '" << library
                         << "' takes channels-first convolutions";
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
    if (elementwiseChains && library != "aie") {
      module.emitError() << "kernel library '" << library
                         << "' takes no elementwise chains";
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    int64_t calls = 0;
    for (kiln::aten::ConvolutionOp op : convolutions) {
      rewrite(op, declare(module, symbols, kConvolutionCall, 9), symbols);
      ++calls;
    }
    // Operands are looked at when each product is rewritten: an earlier
    // rewrite may have replaced one (a product of a product).
    for (Operation *op : products) {
      std::optional<Product> product = libraryProduct(op);
      if (product) {
        rewrite(*product, declare(module, symbols, kMatmulCall, 9), symbols);
        ++calls;
      }
    }
    if (elementwiseChains)
      rewriteChains(module, symbols, calls);
  }

  /// The chains the loader has call sites left for, the most work first,
  /// each as one call.
  void rewriteChains(ModuleOp module, SymbolTable &symbols, int64_t calls) {
    std::vector<kiln::ElementwiseChain> chains =
        kiln::findElementwiseChains(module, kMinChainElements);
    auto work = [](const kiln::ElementwiseChain &chain) {
      return chain.geometry.elements * (chain.geometry.steps + chain.geometry.inputs);
    };
    // Ties in program order: the same module always gives the same calls.
    SmallVector<size_t> order(chains.size());
    std::iota(order.begin(), order.end(), size_t(0));
    llvm::sort(order, [&](size_t a, size_t b) {
      int64_t workA = work(chains[a]), workB = work(chains[b]);
      return workA != workB ? workA > workB : a < b;
    });
    for (size_t index : order) {
      if (maxCalls > 0 && calls >= maxCalls)
        break;
      rewrite(chains[index], declare(module, symbols, kElementwiseCall, 7),
              symbols);
      ++calls;
    }
  }

  /// `void name(ptr geometry, ptr state, ptr operands..., ptr output)`:
  /// convolutions and products take six operands (two inputs, bias, scale,
  /// shift, residual), chains KILN_RT_ELEMENTWISE_MAX_INPUTS.
  func::FuncOp declare(ModuleOp module, SymbolTable &symbols, StringRef name,
                       unsigned pointers) {
    if (auto existing = symbols.lookup<func::FuncOp>(name))
      return existing;
    auto ptr = LLVM::LLVMPointerType::get(&getContext());
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    auto callee = builder.create<func::FuncOp>(
        module.getLoc(), name,
        builder.getFunctionType(SmallVector<Type>(pointers, ptr), {}));
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

  /// The epilogue's operands as buffers: the batch norm's per-channel
  /// scale and shift, computed here from its statistics (C values each), and
  /// the residual.
  struct EpilogueOperands {
    Value scale, shift, residual;
  };
  EpilogueOperands epilogueOperands(OpBuilder &b, Location loc,
                                    const Epilogue &epilogue) {
    EpilogueOperands operands;
    if (kiln::aten::PointwiseOp norm = epilogue.batchNorm) {
      // batch_norm(x, mean, var, weight, bias) is x * a + (bias - mean * a)
      // with a = weight / sqrt(var + eps): at x = 1 with zero mean and bias
      // it is a, at x = 0 the shift, as the generated code computes both.
      ValueRange stats = norm.getInputs().drop_front();
      auto statType = cast<RankedTensorType>(stats[0].getType());
      for (Value stat : stats)
        if (cast<RankedTensorType>(stat.getType()).getRank() > statType.getRank())
          statType = cast<RankedTensorType>(stat.getType());
      auto splat = [&](float value) -> Value {
        return b.create<kiln::aten::ConstantOp>(
            loc, DenseElementsAttr::get(statType, value));
      };
      Value one = splat(1.0f), zero = splat(0.0f);
      auto normOf = [&](ValueRange inputs) -> Value {
        return b.create<kiln::aten::PointwiseOp>(
            loc, statType, norm.getFnAttr(), inputs, norm.getScalarsAttr());
      };
      Value scale = normOf({one, zero, stats[1], stats[2], zero});
      Value shift = normOf({zero, stats[0], stats[1], stats[2], stats[3]});
      operands.scale = readOnlyBuffer(b, loc, scale);
      operands.shift = readOnlyBuffer(b, loc, shift);
    }
    if (epilogue.residual)
      operands.residual = readOnlyBuffer(b, loc, epilogue.residual);
    return operands;
  }

  /// Where a call's ops come from: the node whose value the call computes
  /// (the last folded op's) first, then `op`'s, then the other folded ops'
  /// and the transposes the call absorbs (the op report names every node a
  /// call runs). Verification and the debug-miscompile aid name a node by
  /// its ops' first name.
  static Location callLocation(Operation *op, const Epilogue &epilogue,
                               ArrayRef<Location> absorbed = {}) {
    if (epilogue.ops.empty() && absorbed.empty())
      return op->getLoc();
    SmallVector<Location> locations;
    if (!epilogue.ops.empty())
      locations.push_back(epilogue.ops.back()->getLoc());
    locations.push_back(op->getLoc());
    if (!epilogue.ops.empty())
      for (Operation *folded : ArrayRef(epilogue.ops).drop_back())
        locations.push_back(folded->getLoc());
    llvm::append_range(locations, absorbed);
    return FusedLoc::get(op->getContext(), locations);
  }

  /// Replaces `op`'s result, or the last epilogue op's, by `result`, and
  /// erases the ops folded into the call.
  static void replaceFolded(Operation *op, const Epilogue &epilogue,
                            Value result) {
    Operation *last = epilogue.ops.empty() ? op : epilogue.ops.back();
    last->getResult(0).replaceAllUsesWith(result);
    for (Operation *folded : llvm::reverse(epilogue.ops))
      folded->erase();
    op->erase();
  }

  void rewrite(kiln::aten::ConvolutionOp op, func::FuncOp callee,
               SymbolTable &symbols) {
    Epilogue epilogue =
        matchEpilogue(op.getResult(), /*channelDim=*/1, library == "aie");
    // At the last folded op: the residual may be computed after `op`.
    OpBuilder b(epilogue.ops.empty() ? op.getOperation() : epilogue.ops.back());
    Location loc = callLocation(op, epilogue);
    // Channels last: the data goes through permutes (the residual's
    // matches the output's), which kiln-sink-permutes cancels between calls.
    int64_t rank = op.getType().getRank();
    Value inputTensor = op.getInput();
    RankedTensorType callType = op.getType();
    if (channelsLast) {
      SmallVector<int64_t> toLast = kiln::aten::toChannelsLast(rank);
      auto toChannelsLast = [&](Value v) -> Value {
        return b.create<kiln::aten::PermuteOp>(loc, v, toLast);
      };
      inputTensor = toChannelsLast(inputTensor);
      if (epilogue.residual)
        epilogue.residual = toChannelsLast(epilogue.residual);
      SmallVector<int64_t> shape;
      for (int64_t d : toLast)
        shape.push_back(callType.getDimSize(d));
      callType = callType.clone(shape);
    }
    Value input = readOnlyBuffer(b, loc, inputTensor);
    Value weight = readOnlyBuffer(b, loc, op.getWeight());
    Value bias = op.getBias() ? readOnlyBuffer(b, loc, op.getBias()) : Value();
    EpilogueOperands post = epilogueOperands(b, loc, epilogue);
    Value result = emitCall(b, loc, callee, symbols, "__kiln_convolution",
                            convolutionGeometry(op, epilogue.fields, channelsLast),
                            {input, weight, bias, post.scale, post.shift,
                             post.residual},
                            callType);
    if (channelsLast)
      result = b.create<kiln::aten::PermuteOp>(loc, result,
                                               kiln::aten::fromChannelsLast(rank));
    replaceFolded(op, epilogue, result);
  }

  void rewrite(Product &product, func::FuncOp callee, SymbolTable &symbols) {
    Operation *op = product.op;
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Epilogue epilogue = matchEpilogue(
        op->getResult(0), /*channelDim=*/resultType.getRank() - 1, library == "aie");
    OpBuilder b(epilogue.ops.empty() ? op : epilogue.ops.back());
    SmallVector<Location> transposes;
    for (ProductOperand operand : {product.a, product.b})
      if (operand.transpose && operand.transpose->hasOneUse())
        transposes.push_back(operand.transpose.getLoc());
    Location loc = callLocation(op, epilogue, transposes);
    Value a = readOnlyBuffer(b, loc, product.a.tensor);
    Value bValue = readOnlyBuffer(b, loc, product.b.tensor);
    Value bias =
        product.bias ? readOnlyBuffer(b, loc, product.bias) : Value();
    EpilogueOperands post = epilogueOperands(b, loc, epilogue);
    product.geometry.epilogue = epilogue.fields;
    Value result = emitCall(
        b, loc, callee, symbols, "__kiln_matmul",
        asFields<KILN_RT_MATMUL_FIELDS>(product.geometry),
        {a, bValue, bias, post.scale, post.shift, post.residual}, resultType);
    replaceFolded(op, epilogue, result);
    // A transpose only the product read is dead now.
    for (ProductOperand operand : {product.a, product.b})
      if (operand.transposed)
        for (Operation *user :
             llvm::make_early_inc_range(operand.tensor.getUsers()))
          if (isa<kiln::aten::PermuteOp>(user) && user->use_empty())
            user->erase();
  }

  /// One call for `chain` at its last op, named after all its ops (the
  /// last's first, as a folded call's).
  void rewrite(kiln::ElementwiseChain &chain, func::FuncOp callee,
               SymbolTable &symbols) {
    Operation *last = chain.ops.back();
    OpBuilder b(last);
    SmallVector<Location> locations = {last->getLoc()};
    for (Operation *op : ArrayRef(chain.ops).drop_back())
      locations.push_back(op->getLoc());
    Location loc = locations.size() == 1
                       ? last->getLoc()
                       : FusedLoc::get(&getContext(), locations);
    SmallVector<Value> operands(KILN_RT_ELEMENTWISE_MAX_INPUTS);
    for (size_t i = 0; i < chain.inputs.size(); ++i)
      operands[i] = readOnlyBuffer(b, loc, chain.inputs[i]->get());
    auto type = cast<RankedTensorType>(last->getResult(0).getType());
    Value result = emitCall(b, loc, callee, symbols, "__kiln_elementwise",
                            asFields<KILN_RT_ELEMENTWISE_FIELDS>(chain.geometry),
                            operands, type);
    last->getResult(0).replaceAllUsesWith(result);
    for (Operation *op : llvm::reverse(chain.ops))
      op->erase();
  }

  /// Calls `callee(geometry, state, operands..., output)` with the geometry
  /// in a new constant global and a new zeroed state slot named after
  /// `stem`, into a fresh buffer of `resultType`; returns the result as a
  /// tensor. `operands` are the two inputs, bias, scale, shift and residual
  /// (a chain's: its inputs); for a null one (unused: the library ignores
  /// it) the output's pointer goes.
  Value emitCall(OpBuilder &b, Location loc, func::FuncOp callee,
                 SymbolTable &symbols, StringRef stem,
                 ArrayRef<int64_t> geometry, ArrayRef<Value> operands,
                 RankedTensorType resultType) {
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
    SmallVector<Value> arguments = {pointerTo(b, loc, geometryBuffer),
                                    pointerTo(b, loc, stateBuffer)};
    for (Value operand : operands)
      arguments.push_back(pointerTo(b, loc, operand ? operand : output));
    arguments.push_back(pointerTo(b, loc, output));
    b.create<func::CallOp>(loc, callee, arguments);
    return b.create<bufferization::ToTensorOp>(loc, resultType, output,
                                               /*restrict=*/true,
                                               /*writable=*/true);
  }
};

} // namespace
