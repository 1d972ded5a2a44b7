// Small shared helpers for the parts that drive other programs (valgrind, clang, wast2json, git)
// and read what they wrote.
#pragma once

#include <string>

namespace dlab {

// The whole file as text; "" when it cannot be read (callers say what was expected).
std::string read_text_file(const std::string& path);
// `s` quoted for /bin/sh: single quotes, embedded ones escaped.
std::string shell_quote(const std::string& s);

}  // namespace dlab
