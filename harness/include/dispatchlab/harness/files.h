// Reading what other programs (valgrind, clang, wast2json, git) wrote; they are run by process.h.
#pragma once

#include <string>

namespace dlab {

// The whole file as text; "" when it cannot be read (callers say what was expected).
std::string read_text_file(const std::string& path);

}  // namespace dlab
