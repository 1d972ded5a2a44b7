#include "corpus_suite.h"

#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

namespace dlab::workloads {

const std::vector<CorpusWorkload>& corpus_workloads() {
  static const std::vector<CorpusWorkload> rows = {
#define CORPUS_WORKLOAD(name, size, quick, role, what) {#name, size, quick, role, what},
#include "../corpus/corpus.def"
#undef CORPUS_WORKLOAD
  };
  return rows;
}

std::string corpus_role(const std::string& name) {
  for (const auto& w : corpus_workloads())
    if (name == w.name) return w.role;
  return "";
}

std::string corpus_path(const char* file) {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (exe.parent_path() / "interpreter" / "corpus" / file).string();
}

void require_corpus_built() {
  for (const char* f : {"corpus.wasm", "libdlab_corpus_native.so"})
    if (!std::filesystem::exists(corpus_path(f)))
      throw std::runtime_error(corpus_path(f) + " not found: the corpus is opt-in; build it with `just corpus` (it fetches SQLite, "
                                                "LZ4 and Lua from the npm registry into ~/.cache/dispatchlab/corpus)");
}

CorpusNative corpus_native(const std::string& name) {
  // Loaded once and never closed: the timed calls run its code for the whole bench.
  static void* lib = [] {
    void* h = dlopen(corpus_path("libdlab_corpus_native.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) throw std::runtime_error(fmt::format("the corpus's native build: {} (build it with `just corpus`)", dlerror()));
    return h;
  }();
  void* f = dlsym(lib, ("dlab_native_" + name).c_str());
  if (!f) throw std::runtime_error(fmt::format("the corpus's native build has no dlab_native_{} (rebuild it with `just corpus`)", name));
  return reinterpret_cast<CorpusNative>(f);
}

}  // namespace dlab::workloads
