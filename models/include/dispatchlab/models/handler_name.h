// A handler's name in the generated code and in the binary's symbols: h_<kind>_<copy>, h_exit for
// the exit. Kinds differ by case (s and S), which file systems and symbol readers keep, but make
// it explicit: upper-case kinds get an "x" prefix so names stay unique everywhere. The generator
// names the handlers with it, and the ideal bound finds their code by it.
#pragma once

#include <string>

namespace dlab::models {

inline std::string handler_name(const std::string& kind, int copy) {
  bool upper = kind.size() == 1 && kind[0] >= 'A' && kind[0] <= 'Z';
  return "h_" + std::string(upper ? "x" : "") + kind + "_" + std::to_string(copy);
}

}  // namespace dlab::models
