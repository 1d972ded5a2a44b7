// A shared library opened when first needed (dlopen) instead of at start-up. libpfm4 and PAPI
// are needed only to count hardware events, yet as NEEDED libraries the dynamic loader maps and
// relocates them in every dlab process: libpfm4 alone carries about 41,000 relocations, most of
// the loader's share of an empty module's start-up. Opened here, they cost nothing to
// `dlab wasm run` and the same as before to a command that counts.
#pragma once

#include <string>

namespace dlab {

class SharedLibrary {
 public:
  // dlopen(soname, RTLD_NOW | RTLD_LOCAL); a failure is kept, not thrown, as `error()`.
  explicit SharedLibrary(const char* soname);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  // Why it is not loaded, or which symbol was missing: "" when every bind() found its symbol.
  const std::string& error() const { return error_; }
  // Binds `fn` to the library's symbol `name` (of the type the library's own header declares);
  // a missing symbol leaves it null and says so in error().
  template <class Fn>
  void bind(Fn*& fn, const char* name) {
    fn = reinterpret_cast<Fn*>(symbol(name));
  }

 private:
  void* symbol(const char* name);
  std::string soname_;
  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace dlab
