// Handler and probe signatures: argument types by name ("ptr,ptr,u64,u64,u32,u32") and the probe
// shapes (integers only, floats only, mixed).
#pragma once

#include <string>
#include <vector>

namespace dlab::probes {

enum class ArgType { kPtr, kU64, kI64, kU32, kF64, kF32 };

struct ArgInfo {
  const char* name;    // as written in --args
  const char* c_type;  // as written in the probe source
  bool is_float;
};
const ArgInfo& info(ArgType t);

using Signature = std::vector<ArgType>;
// The most arguments a probe signature may have (`dlab probes --count`, `probes fit --args`).
inline constexpr size_t kMaxProbeArguments = 256;
Signature parse_signature(const std::string& s);  // throws std::invalid_argument
std::string to_string(const Signature& s);

// 24 integer, 24 float, or 24 of each alternating (i, f, i, f ...): positional conventions (Windows
// x64) answer differently for the mixed shape.
Signature shape(const std::string& name, int count);  // "ints", "floats", "mixed"

}  // namespace dlab::probes
