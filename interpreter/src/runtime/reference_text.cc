#include "dispatchlab/interpreter/reference_text.h"

#include <fmt/format.h>

#include "dispatchlab/interpreter/types.h"

namespace dlab::wasm {

namespace {

// The hierarchy a reference value's static type is in: which of the slot encodings (runtime.h's
// ref namespace) it can hold. A defined type's hierarchy is its kind's (func, or any for structs
// and arrays), looked up in the owner's module or, for a canonical type, in its type store.
HeapType hierarchy(ValType t, const Instance* owner) {
  HeapType h = ref_heap(t);
  if (is_abstract_heap(h)) return heap_top(h);
  std::optional<TypeKind> kind;
  if (int64_t idx = heap_type_index(h); idx >= 0) {
    if (owner && static_cast<size_t>(idx) < owner->module.types.size()) kind = owner->module.types[static_cast<size_t>(idx)].kind;
  } else if (h >= kHeapCanonical && owner && owner->types && TypeStore::id_of(h) < owner->types->size()) {
    kind = owner->types->type(TypeStore::id_of(h)).kind;
  }
  if (!kind) return 0;  // unknown: judged by the encoding alone, without reading the object
  return *kind == TypeKind::kFunc ? kHeapFunc : kHeapAny;
}

}  // namespace

std::string reference_text(const Value& v, const Instance* owner) {
  if (v.lo == 0) return "ref.null";
  const HeapType top = hierarchy(v.type, owner);
  if (top == kHeapFunc) return "ref.func";
  if (top == kHeapExn) return "ref.exn";
  if (ref::is_i31(v.lo)) return fmt::format("ref.i31 {}", v.lo >> 1 & 0x7FFFFFFFu);
  if (ref::is_host(v.lo)) return fmt::format("{} {}", top == kHeapExtern ? "ref.extern" : "ref.host", ref::host_number(v.lo));
  if (top == kHeapAny || top == kHeapExtern) {  // a GcObject (externalised, in the extern hierarchy)
    const char* kind = ref::object(v.lo)->rtt->kind == TypeKind::kStruct ? "ref.struct" : "ref.array";
    return top == kHeapExtern ? fmt::format("ref.extern ({})", kind) : std::string(kind);
  }
  return "ref";  // a type this build cannot place: never its address
}

}  // namespace dlab::wasm
