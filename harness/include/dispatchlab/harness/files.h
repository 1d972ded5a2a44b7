// Reading what other programs (valgrind, clang, wast2json, git) wrote; they are run by process.h.
#pragma once

#include <string>

namespace dlab {

// The whole file as text; "" when it cannot be read (callers say what was expected).
std::string read_text_file(const std::string& path);
// The whole file, for inputs a user names: throws std::runtime_error("cannot read <path>: <why>")
// when it is missing, not a regular file, or unreadable.
std::string read_input_file(const std::string& path);

}  // namespace dlab
