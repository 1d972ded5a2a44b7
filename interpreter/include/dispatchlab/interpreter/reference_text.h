// A reference value as the spec's scripts write it: "ref.null", "ref.func", "ref.exn",
// "ref.extern N" / "ref.host N" (a host reference and its number), "ref.i31 N", "ref.struct",
// "ref.array". Never an address: a result printed twice, by any engine, in any run, reads the same.
#pragma once

#include <string>

#include "dispatchlab/interpreter/runtime.h"

namespace dlab::wasm {

// `owner`: the instance whose function produced the value (its module's type indices name the
// value's heap type); may be null, when the type is abstract or canonical.
std::string reference_text(const Value& v, const Instance* owner);

}  // namespace dlab::wasm
