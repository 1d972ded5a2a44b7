// Input quoted in a message (a CSV field or header, a line of a file, an argument): what would not
// show on a terminal is escaped, so `no column 'x' (columns: \ufeffx, y)` says why 'x' is missing
// and a control byte in a file cannot rewrite the line it is reported on.
#pragma once

#include <string>
#include <string_view>

namespace dlab {

// `text` with control bytes as \t, \n, \r or \xNN, bytes that are not UTF-8 as \xNN, and
// invisible or direction-changing code points (a byte-order mark, zero-width spaces, bidi
// controls, C1 controls) as \uXXXX. Printable UTF-8 (µs, Zen 4) is kept as it is.
std::string escape_input(std::string_view text);

// 'text', escaped: the form every message quotes input in.
std::string quote_input(std::string_view text);

}  // namespace dlab
