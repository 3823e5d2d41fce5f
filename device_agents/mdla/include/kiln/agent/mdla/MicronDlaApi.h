//===- MicronDlaApi.h - Kiln's declarations of Micron's DLA C API -*- C++ -*-===//
//
// This file declares, as function pointer types, the part of the C API of
// Micron's libmicrondla.so that the mdla agent calls. They are Kiln's own
// declarations, written from Micron's published API reference; Kiln does
// not include or copy the vendor's header. The library is proprietary and
// cannot be obtained where Kiln is built, so these declarations are checked
// only against Kiln's test double (device_agents/mdla/testdouble), which
// implements them.
//
// Where the reference leaves a detail open, the comment says what Kiln
// assumes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::agent::mdla::api {

extern "C" {
/// A new context ("cmemo"), or null.
using ie_create = void *(*)();
/// Like ie_create, but the library checks that the hardware is present and
/// usable first; null when it is not.
using ie_safecreate = void *(*)();
/// Compiles the ONNX model at `modelpath` for the context's device into
/// `outbin`. `inshapes` gives the input sizes ("1x3x224x224", inputs
/// separated by ';'). On success returns the context and sets the number of
/// outputs, their ranks and sizes (arrays the caller frees with free());
/// null on failure. `cmemp` shares memory with another context (null here).
using ie_compile = void *(*)(void *cmemo, const char *modelpath,
                             const char *outbin, const char *inshapes,
                             unsigned *noutputs, unsigned **noutdims,
                             uint64_t ***outshapes, void *cmemp);
/// Loads the compiled `inbin` onto the device; the outputs as ie_compile
/// reports them. The context, or null on failure.
using ie_init = void *(*)(void *cmemo, const char *inbin, unsigned *noutputs,
                          unsigned **noutdims, uint64_t ***outshapes,
                          void *cmemp);
/// Runs once, blocking: `ninputs` f32 inputs of `input_elements` elements
/// each into `noutputs` caller-allocated f32 outputs. 0 on success, a
/// negative code on failure.
using ie_run = int (*)(void *cmemo, const float *const *input,
                       const uint64_t *input_elements, unsigned ninputs,
                       float **output, uint64_t *output_elements,
                       unsigned noutputs);
/// Queues one run's inputs (the non-blocking half of ie_run); `userparam`
/// comes back from ie_getresult. 0 on success.
using ie_putinput = int (*)(void *cmemo, const float *const *input,
                            const uint64_t *input_elements, unsigned ninputs,
                            void *userparam);
/// Waits for the oldest queued run and writes its outputs. 0 on success.
using ie_getresult = int (*)(void *cmemo, float **output,
                             uint64_t *output_elements, unsigned noutputs,
                             void **userparam);
/// Sets a named option ("nobatch", "debug", ...); the value's type depends
/// on the option (Kiln passes strings). 0 on success.
using ie_setflag = int (*)(void *cmemo, const char *name, const void *value);
/// Reads a named property into `value`. Kiln reads "version" into a char
/// buffer of kInfoBufferBytes (an assumption: the reference does not state
/// the buffer's size). 0 on success.
using ie_getinfo = int (*)(void *cmemo, const char *name, void *value);
/// Runs once in Micron's software emulation of the device (same arguments
/// as ie_run).
using ie_run_sw = int (*)(void *cmemo, const float *const *input,
                          const uint64_t *input_elements, unsigned ninputs,
                          float **output, uint64_t *output_elements,
                          unsigned noutputs);
/// Releases the context and everything on the device it holds.
using ie_free = void (*)(void *cmemo);
}

/// Size of the buffer Kiln passes to ie_getinfo for string properties.
inline constexpr size_t kInfoBufferBytes = 256;

} // namespace kiln::agent::mdla::api
