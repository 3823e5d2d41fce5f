//===- HostCode.cpp - what agents that load host machine code share -------===//
#include "kiln/agent/HostCode.h"

#include <dlfcn.h>
#include <sys/utsname.h>

namespace kiln::agent {

std::string hostArch() {
  struct utsname name {};
  return ::uname(&name) == 0 ? name.machine : "unknown";
}

bool tripleRunsHere(std::string_view triple) {
  std::string_view arch = triple.substr(0, triple.find('-'));
  std::string host = hostArch();
  return arch == host || (arch == "arm64" && host == "aarch64");
}

std::string dlerrorText() {
  const char *error = ::dlerror();
  return error ? error : "unknown dynamic loader error";
}

} // namespace kiln::agent
