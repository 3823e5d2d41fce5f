//===- main.cpp - kiln-torchscript-import ---------------------------------===//
//
// This file implements kiln-torchscript-import's main: a TorchScript archive
// in, a kiln.v1.Graph (protobuf JSON) and its weights out. kilnd runs it as a
// child process (server/lib/TorchScriptImport.cpp): libtorch is built with
// the pre-C++11 ABI and never loads into the daemon.
//
//   kiln-torchscript-import ARCHIVE OUTDIR [DTYPE:D0xD1x... ...]
//
// writes OUTDIR/graph.json and OUTDIR/param_<i>.bin (Graph.parameters[i]'s
// bytes; kilnd stores them and fills in the digests). Exit status 0 on
// success; 2 for an input Kiln rejects (INVALID_ARGUMENT), 3 for a construct
// it does not support (UNIMPLEMENTED), 1 otherwise; the reason is on stderr.
//
//===----------------------------------------------------------------------===//
#include "TorchScriptConverter.h"

#include <c10/util/Exception.h>

#include <iostream>
#include <new>
#include <string>

int main(int argc, char **argv) {
  if (argc < 3) {
    std::cerr << "usage: kiln-torchscript-import ARCHIVE OUTDIR "
                 "[DTYPE:D0xD1x... ...]\n";
    return 64;
  }
  try {
    kiln::torchscript::importArchive(
        argv[1], argv[2], std::vector<std::string>(argv + 3, argv + argc));
    return 0;
  } catch (const kiln::torchscript::ImportError &e) {
    std::cerr << e.message << "\n";
    return e.code;
  } catch (const std::bad_alloc &) {
    std::cerr << "out of memory (--compile-memory-bytes)\n";
    return 4;
  } catch (const c10::Error &e) {
    std::string what = e.what_without_backtrace();
    std::cerr << "libtorch: " << what << "\n";
    // c10's CPU allocator reports a failed allocation this way.
    return what.find("can't allocate memory") != std::string::npos ? 4 : 2;
  } catch (const std::exception &e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
