//===- ScalarFloatToInt.cpp - float-to-int conversions kept scalar --------===//
//
// This file implements keepFloatToIntScalar: fptosi and fptoui become
// scalar fcvt instructions in inline assembly, before LLVM's vectorizers run.
//
//===----------------------------------------------------------------------===//
#include "ScalarFloatToInt.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

#include <string>
#include <vector>

namespace kiln::compiler {
namespace {

/// One lane: `value` (a floating-point scalar) rounded toward zero to the
/// integer type `result`.
llvm::Value *convertLane(llvm::IRBuilder<> &b, llvm::Value *value,
                         llvm::IntegerType *result, bool isSigned) {
  if (!value->getType()->isFloatTy() && !value->getType()->isDoubleTy())
    value = b.CreateFPExt(value, b.getFloatTy()); // half, bfloat16: exact
  bool wide = result->getBitWidth() > 32;
  llvm::IntegerType *gpr = wide ? b.getInt64Ty() : b.getInt32Ty();
  std::string instruction = std::string("fcvt.") + (wide ? "l" : "w") +
                            (isSigned ? "" : "u") + "." +
                            (value->getType()->isDoubleTy() ? "d" : "s") +
                            " $0, $1, rtz";
  auto *signature = llvm::FunctionType::get(gpr, {value->getType()}, false);
  auto *fcvt = llvm::InlineAsm::get(signature, instruction, "=r,f",
                                    /*hasSideEffects=*/false);
  llvm::CallInst *call = b.CreateCall(signature, fcvt, {value});
  call->setDoesNotAccessMemory();
  call->setDoesNotThrow();
  return result == gpr ? static_cast<llvm::Value *>(call)
                       : b.CreateTrunc(call, result);
}

/// The conversion `cast` as scalar fcvt instructions, or null for one this
/// leaves alone (scalable vectors, results wider than 64 bits).
llvm::Value *rewrite(llvm::CastInst &cast) {
  bool isSigned = cast.getOpcode() == llvm::Instruction::FPToSI;
  llvm::Type *type = cast.getType();
  auto *lane = llvm::dyn_cast<llvm::IntegerType>(type->getScalarType());
  if (!lane || lane->getBitWidth() > 64 || llvm::isa<llvm::ScalableVectorType>(type))
    return nullptr;
  llvm::IRBuilder<> b(&cast);
  llvm::Value *source = cast.getOperand(0);
  auto *vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
  if (!vector)
    return convertLane(b, source, lane, isSigned);
  llvm::Value *lanes = llvm::PoisonValue::get(vector);
  for (unsigned i = 0; i < vector->getNumElements(); ++i)
    lanes = b.CreateInsertElement(
        lanes, convertLane(b, b.CreateExtractElement(source, i), lane, isSigned),
        i);
  return lanes;
}

} // namespace

int keepFloatToIntScalar(llvm::Module &module) {
  std::vector<llvm::CastInst *> conversions;
  for (llvm::Function &function : module)
    for (llvm::BasicBlock &block : function)
      for (llvm::Instruction &instruction : block)
        if (llvm::isa<llvm::FPToSIInst, llvm::FPToUIInst>(instruction))
          conversions.push_back(llvm::cast<llvm::CastInst>(&instruction));
  int rewritten = 0;
  for (llvm::CastInst *cast : conversions)
    if (llvm::Value *scalar = rewrite(*cast)) {
      scalar->takeName(cast);
      cast->replaceAllUsesWith(scalar);
      cast->eraseFromParent();
      ++rewritten;
    }
  return rewritten;
}

} // namespace kiln::compiler
