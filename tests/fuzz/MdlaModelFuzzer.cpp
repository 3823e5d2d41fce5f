//===- MdlaModelFuzzer.cpp - fuzz the mdla agent's artifact reader ---------===//
//
// libFuzzer target: bytes as an mdla artifact (an ONNX model), through what
// kiln-agent-mdla does with one: parse and check it, bind its first input as
// a weight, and evaluate it in f32 and in Kiln's fixed-point model on zero
// inputs. Every step must answer with a status, never crash, and never
// allocate past the model's element limit.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/mdla/FixedPointModel.h"
#include "kiln/agent/mdla/MdlaProgram.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

using namespace kiln::agent::mdla;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto program = MdlaProgram::parse(
      std::string_view(reinterpret_cast<const char *>(data), size));
  if (!program.ok())
    return 0;
  // Inputs of zeros; skip models whose inputs alone are large (the limit
  // per tensor is 2^28 elements; the fuzzer's memory is smaller).
  int64_t total = 0;
  for (const Port &port : program->inputs())
    total += elementCount(port.shape);
  if (total > (int64_t{1} << 20))
    return 0;
  std::vector<std::vector<float>> buffers;
  std::map<std::string, TensorView> bound;
  for (const Port &port : program->inputs()) {
    buffers.emplace_back(static_cast<size_t>(elementCount(port.shape)), 0.0f);
    bound[port.name] = TensorView{port.shape, buffers.back().data()};
  }
  if (!program->inputs().empty()) {
    const Port &first = program->inputs().front();
    (void)program->bindWeights({{first.name, bound.at(first.name)}});
  }
  // A small work budget: the fuzzer's time per input is bounded too.
  constexpr int64_t kBudget = int64_t{1} << 22;
  (void)evaluate(*program, bound, Numerics::kF32, kBudget);
  (void)evaluate(*program, bound, Numerics::kQ16, kBudget);
  return 0;
}
