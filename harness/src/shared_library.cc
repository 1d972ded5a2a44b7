#include "shared_library.h"

#include <dlfcn.h>

namespace dlab {

SharedLibrary::SharedLibrary(const char* soname) : soname_(soname) {
  handle_ = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* why = ::dlerror();
    error_ = soname_ + " could not be loaded: " + (why ? why : "dlopen failed");
  }
}

SharedLibrary::~SharedLibrary() {
  // Left open: the library's own static state (PAPI's, libpfm4's) lives as long as the process.
}

void* SharedLibrary::symbol(const char* name) {
  if (!handle_) return nullptr;
  ::dlerror();
  void* p = ::dlsym(handle_, name);
  if (!p && error_.empty()) error_ = soname_ + " has no symbol " + name;
  return p;
}

}  // namespace dlab
