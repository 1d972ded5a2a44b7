#include "dispatchlab/interpreter/unknown_imports.h"

#include <memory>

#include "dispatchlab/harness/quote.h"

namespace dlab::wasm {

std::vector<std::string> link_unknown_imports_as_traps(Runtime& rt, const Module& m) {
  std::vector<std::string> linked;
  std::vector<uint32_t> type_ids;  // canonical: an import of a type in a recursive group matches too
  for (const auto& im : m.imports) {
    if (im.kind != ExternKind::kFunc || im.func_type >= m.types.size() || rt.provides(im.module, im.name)) continue;
    // The message outlives the call that reports it: HostCall::trap keeps a pointer. The names are
    // the module's, any bytes at all: escaped before they can reach a terminal.
    auto message = std::make_shared<const std::string>("unknown import " + escape_input(im.module) + "." + escape_input(im.name) +
                                                       " called");
    ExternVal v;
    v.kind = ExternKind::kFunc;
    if (type_ids.empty()) type_ids = rt.canonical_ids(m);
    v.func = rt.host_function(type_ids.at(im.func_type), [message](HostCall& hc) { hc.trap = message->c_str(); });
    rt.register_export(im.module, im.name, v);
    linked.push_back(im.module + "." + im.name);
  }
  return linked;
}

}  // namespace dlab::wasm
