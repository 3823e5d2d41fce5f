//===- MicronDlaTestDouble.cpp - a TEST DOUBLE of libmicrondla.so ---------===//
//
// This file is a test double, not Micron's library: it implements the C API
// Kiln declares in MicronDlaApi.h on Kiln's own fixed-point model of the
// MDLA, so that the mdla agent's driver code (dlopen, version check,
// create, compile, init, run, free, and every error path) runs in tests on
// machines without the proprietary SDK. Its "compiled" .bin is the ONNX
// model behind a header of its own; its runs are Kiln's fixed-point model.
//
// For tests it reads two variables: KILN_MDLA_TESTDOUBLE_NO_BOARD=1 makes
// ie_safecreate find no board; KILN_MDLA_TESTDOUBLE_VERSION replaces the
// version it reports.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/mdla/FixedPointModel.h"
#include "kiln/agent/mdla/MdlaProgram.h"

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using kiln::agent::mdla::MdlaProgram;

constexpr const char *kBinMagic = "KILN-MDLA-TESTDOUBLE-BIN-1\n";

struct Context {
  std::optional<MdlaProgram> program;
  std::map<std::string, std::string> flags;
  std::deque<std::pair<std::vector<std::vector<float>>, void *>> finished;
};

std::optional<std::string> readFile(const char *path) {
  if (!path)
    return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

/// Reports the program's outputs the way the API does: malloc'ed arrays.
void describeOutputs(const MdlaProgram &program, unsigned *noutputs,
                     unsigned **noutdims, uint64_t ***outshapes) {
  if (!noutputs || !noutdims || !outshapes)
    return;
  const auto &outputs = program.outputs();
  *noutputs = static_cast<unsigned>(outputs.size());
  *noutdims = static_cast<unsigned *>(std::malloc(sizeof(unsigned) * outputs.size()));
  *outshapes = static_cast<uint64_t **>(std::malloc(sizeof(uint64_t *) * outputs.size()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    (*noutdims)[i] = static_cast<unsigned>(outputs[i].shape.size());
    (*outshapes)[i] = static_cast<uint64_t *>(
        std::malloc(sizeof(uint64_t) * std::max<size_t>(outputs[i].shape.size(), 1)));
    for (size_t d = 0; d < outputs[i].shape.size(); ++d)
      (*outshapes)[i][d] = static_cast<uint64_t>(outputs[i].shape[d]);
  }
}

/// Runs the loaded program: 0, or the negative code of what was wrong.
int runProgram(Context *context, const float *const *input,
               const uint64_t *input_elements, unsigned ninputs,
               std::vector<std::vector<float>> &results) {
  if (!context || !context->program)
    return -1;  // not initialised
  const MdlaProgram &program = *context->program;
  if (ninputs != program.inputs().size() || (ninputs && (!input || !input_elements)))
    return -2;  // wrong number of inputs
  std::map<std::string, kiln::agent::mdla::TensorView> bound;
  for (unsigned i = 0; i < ninputs; ++i) {
    const auto &port = program.inputs()[i];
    if (input_elements[i] != static_cast<uint64_t>(kiln::agent::mdla::elementCount(port.shape)) ||
        !input[i])
      return -3;  // wrong size
    bound[port.name] = {port.shape, input[i]};
  }
  auto evaluation = kiln::agent::mdla::evaluate(program, bound,
                                                kiln::agent::mdla::Numerics::kQ16);
  if (!evaluation.ok())
    return -5;
  results.clear();
  for (auto &tensor : evaluation->outputs)
    results.push_back(std::move(tensor.data));
  return 0;
}

int copyResults(const std::vector<std::vector<float>> &results, float **output,
                uint64_t *output_elements, unsigned noutputs) {
  if (noutputs != results.size() || (noutputs && (!output || !output_elements)))
    return -4;  // wrong number of outputs
  for (unsigned o = 0; o < noutputs; ++o) {
    if (output_elements[o] != results[o].size() || !output[o])
      return -3;
    std::memcpy(output[o], results[o].data(), results[o].size() * sizeof(float));
  }
  return 0;
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) void *ie_create() { return new Context; }

__attribute__((visibility("default"))) void *ie_safecreate() {
  const char *noBoard = std::getenv("KILN_MDLA_TESTDOUBLE_NO_BOARD");
  if (noBoard && std::string(noBoard) == "1")
    return nullptr;
  return new Context;
}

__attribute__((visibility("default"))) void *
ie_compile(void *cmemo, const char *modelpath, const char *outbin, const char *inshapes,
           unsigned *noutputs, unsigned **noutdims, uint64_t ***outshapes, void *) {
  std::optional<std::string> model = readFile(modelpath);
  if (!model || !outbin || !inshapes)
    return nullptr;
  auto program = MdlaProgram::parse(*model);
  if (!program.ok())
    return nullptr;
  // inshapes must list the model's inputs, in order.
  std::vector<std::string> expected;
  for (const auto &port : program->inputs())
    expected.push_back(absl::StrJoin(port.shape, "x"));
  if (absl::StrJoin(expected, ";") != inshapes)
    return nullptr;
  std::ofstream out(outbin, std::ios::binary | std::ios::trunc);
  out << kBinMagic << *model;
  if (!out.flush())
    return nullptr;
  describeOutputs(*program, noutputs, noutdims, outshapes);
  return cmemo ? cmemo : ie_create();
}

__attribute__((visibility("default"))) void *
ie_init(void *cmemo, const char *inbin, unsigned *noutputs, unsigned **noutdims,
        uint64_t ***outshapes, void *) {
  auto *context = static_cast<Context *>(cmemo);
  std::optional<std::string> bin = readFile(inbin);
  if (!context || !bin || bin->rfind(kBinMagic, 0) != 0)
    return nullptr;
  auto program = MdlaProgram::parse(std::string_view(*bin).substr(std::strlen(kBinMagic)));
  if (!program.ok())
    return nullptr;
  context->program = *std::move(program);
  describeOutputs(*context->program, noutputs, noutdims, outshapes);
  return context;
}

__attribute__((visibility("default"))) int
ie_run(void *cmemo, const float *const *input, const uint64_t *input_elements,
       unsigned ninputs, float **output, uint64_t *output_elements, unsigned noutputs) {
  std::vector<std::vector<float>> results;
  if (int code = runProgram(static_cast<Context *>(cmemo), input, input_elements,
                            ninputs, results))
    return code;
  return copyResults(results, output, output_elements, noutputs);
}

__attribute__((visibility("default"))) int
ie_run_sw(void *cmemo, const float *const *input, const uint64_t *input_elements,
          unsigned ninputs, float **output, uint64_t *output_elements, unsigned noutputs) {
  return ie_run(cmemo, input, input_elements, ninputs, output, output_elements, noutputs);
}

__attribute__((visibility("default"))) int
ie_putinput(void *cmemo, const float *const *input, const uint64_t *input_elements,
            unsigned ninputs, void *userparam) {
  auto *context = static_cast<Context *>(cmemo);
  std::vector<std::vector<float>> results;
  if (int code = runProgram(context, input, input_elements, ninputs, results))
    return code;
  context->finished.emplace_back(std::move(results), userparam);
  return 0;
}

__attribute__((visibility("default"))) int
ie_getresult(void *cmemo, float **output, uint64_t *output_elements, unsigned noutputs,
             void **userparam) {
  auto *context = static_cast<Context *>(cmemo);
  if (!context || context->finished.empty())
    return -6;  // nothing queued
  auto [results, param] = std::move(context->finished.front());
  context->finished.pop_front();
  if (userparam)
    *userparam = param;
  return copyResults(results, output, output_elements, noutputs);
}

__attribute__((visibility("default"))) int ie_setflag(void *cmemo, const char *name,
                                                      const void *value) {
  auto *context = static_cast<Context *>(cmemo);
  if (!context || !name || !value)
    return -1;
  context->flags[name] = static_cast<const char *>(value);
  return 0;
}

__attribute__((visibility("default"))) int ie_getinfo(void *cmemo, const char *name,
                                                      void *value) {
  if (!cmemo || !name || !value)
    return -1;
  if (std::string(name) != "version")
    return -1;
  const char *override = std::getenv("KILN_MDLA_TESTDOUBLE_VERSION");
  std::string version = override ? override : "2020.2.0 (Kiln test double, not Micron's library)";
  std::strncpy(static_cast<char *>(value), version.c_str(), 255);
  static_cast<char *>(value)[255] = '\0';
  return 0;
}

__attribute__((visibility("default"))) void ie_free(void *cmemo) {
  delete static_cast<Context *>(cmemo);
}

} // extern "C"
