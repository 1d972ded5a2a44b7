#include "dispatchlab/probes/signature.h"

#include <sstream>

#include <fmt/format.h>
#include <stdexcept>

namespace dlab::probes {

namespace {
const ArgInfo kInfo[] = {
    {"ptr", "void*", false}, {"u64", "unsigned long long", false}, {"i64", "long long", false},
    {"u32", "unsigned", false}, {"f64", "double", true},            {"f32", "float", true},
};
}  // namespace

const ArgInfo& info(ArgType t) { return kInfo[static_cast<int>(t)]; }

Signature parse_signature(const std::string& s) {
  Signature sig;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(0, item.find_first_not_of(" "));
    item.erase(item.find_last_not_of(" ") + 1);
    bool found = false;
    for (int i = 0; i < 6; ++i)
      if (item == kInfo[i].name) {
        sig.push_back(static_cast<ArgType>(i));
        found = true;
      }
    if (!found) throw std::invalid_argument("unknown argument type '" + item + "' (ptr, u64, i64, u32, f64, f32)");
  }
  if (sig.empty()) throw std::invalid_argument("empty signature");
  // Past a few dozen arguments every one is on the stack on every target; the probe's generated
  // source and clang's time grow with the square of the count.
  if (sig.size() > kMaxProbeArguments)
    throw std::invalid_argument(fmt::format("{} arguments: a signature has at most {}", sig.size(), kMaxProbeArguments));
  return sig;
}

std::string to_string(const Signature& s) {
  std::string out;
  for (auto t : s) out += (out.empty() ? "" : ",") + std::string(info(t).name);
  return out;
}

Signature shape(const std::string& name, int count) {
  Signature s;
  for (int i = 0; i < count; ++i) {
    if (name == "ints") s.push_back(ArgType::kI64);
    else if (name == "floats") s.push_back(ArgType::kF64);
    else if (name == "mixed") s.insert(s.end(), {ArgType::kI64, ArgType::kF64});
    else throw std::invalid_argument("unknown shape '" + name + "' (ints, floats, mixed)");
  }
  return s;
}

}  // namespace dlab::probes
