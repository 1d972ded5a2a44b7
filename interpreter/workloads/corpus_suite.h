// `dlab wasm bench --suite corpus`: the corpus of real programs (interpreter/corpus/corpus.def,
// built by `just corpus`): its workloads with their roles, where the built modules are, and the
// native build, loaded from its shared library so that dlab itself never links the corpus.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dlab::workloads {

struct CorpusWorkload {
  const char* name;
  uint32_t size, quick;
  const char* role;  // "selection" (may choose optimisations) or "held_out" (only timed)
  const char* what;  // the program and the registry package its sources come from
};
const std::vector<CorpusWorkload>& corpus_workloads();
// The role of workload `name` ("" when it is not a corpus workload).
std::string corpus_role(const std::string& name);

// Built next to the dlab binary by the `corpus` target (interpreter/corpus/ in the build tree).
std::string corpus_path(const char* file);  // corpus.wasm, corpus_cmd.wasm, libdlab_corpus_native.so
// Throws with what to do when the corpus is not built.
void require_corpus_built();

using CorpusNative = uint32_t (*)(uint32_t);
// dlab_native_<name> from libdlab_corpus_native.so (loaded once); throws saying why when missing.
CorpusNative corpus_native(const std::string& name);

}  // namespace dlab::workloads
