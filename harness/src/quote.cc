#include "dispatchlab/harness/quote.h"

#include <fmt/format.h>

namespace dlab {

namespace {

// The code point of the UTF-8 sequence at text[i] and its length; length 0 when it is not one
// (a stray continuation byte, a truncated, overlong or surrogate sequence).
struct Decoded {
  char32_t cp = 0;
  size_t length = 0;
};

Decoded decode_utf8(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char b = byte(i);
  size_t n = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b <= 0xDF ? 2 : 0;
  if (b >= 0xF5 || n == 0 || i + n > text.size()) return {};
  char32_t cp = b & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {};
  return {cp, n};
}

// Code points a terminal shows as nothing (or that reorder what follows): C1 controls, the soft
// hyphen, zero-width and bidi controls, the line and paragraph separators, the byte-order mark,
// interlinear annotation marks.
bool invisible(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0xAD || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
         (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB);
}

}  // namespace

std::string escape_input(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned char b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      if (b == '\t') out += "\\t";
      else if (b == '\n') out += "\\n";
      else if (b == '\r') out += "\\r";
      else if (b < 0x20 || b == 0x7F) out += fmt::format("\\x{:02x}", b);
      else out += static_cast<char>(b);
      ++i;
      continue;
    }
    Decoded d = decode_utf8(text, i);
    if (d.length == 0) {
      out += fmt::format("\\x{:02x}", b);
      ++i;
    } else {
      if (invisible(d.cp)) out += fmt::format("\\u{:04x}", static_cast<uint32_t>(d.cp));
      else out.append(text.substr(i, d.length));
      i += d.length;
    }
  }
  return out;
}

std::string quote_input(std::string_view text) { return "'" + escape_input(text) + "'"; }

}  // namespace dlab
