#include "spec/spec_script.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/quote.h"

namespace dlab::wasm {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Literals.

namespace {
std::string strip_underscores(const std::string& t) {
  std::string s;
  for (char c : t)
    if (c != '_') s.push_back(c);
  return s;
}
}  // namespace

namespace {
// A literal as quoted in an error: its first 40 bytes and its length when it is longer (a
// 100,000-digit literal is not echoed whole), escaped as every message quotes input (quote.h).
std::string shown(const std::string& text) {
  constexpr size_t kShown = 40;
  std::string out = escape_input(std::string_view(text).substr(0, kShown));
  if (text.size() > kShown) out += fmt::format("... ({} characters)", text.size());
  return out;
}
}  // namespace

uint64_t parse_int_literal(const std::string& text, int bits) {
  std::string s = strip_underscores(text);
  bool neg = false;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  int base = 10;
  if (s.compare(i, 2, "0x") == 0 || s.compare(i, 2, "0X") == 0) {
    base = 16;
    i += 2;
  }
  if (i >= s.size()) throw std::invalid_argument("not an integer: " + shown(text));
  unsigned __int128 v = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;
    if (d >= base) throw std::invalid_argument("not an integer: " + shown(text));
    v = v * base + d;
    if (v > (static_cast<unsigned __int128>(1) << 64)) throw std::invalid_argument("integer out of range: " + shown(text));
  }
  unsigned __int128 limit = static_cast<unsigned __int128>(1) << bits;
  if (neg ? v > limit / 2 : v >= limit) throw std::invalid_argument("integer out of range: " + shown(text));
  uint64_t x = static_cast<uint64_t>(v);
  if (neg) x = ~x + 1;
  if (bits < 64) x &= (uint64_t{1} << bits) - 1;
  return x;
}

std::string parse_float_literal(const std::string& text, int bits, bool patterns) {
  if (text == "nan:canonical" || text == "nan:arithmetic") {
    if (!patterns) throw std::invalid_argument(shown(text) + " is a result pattern, not an argument");
    return text;
  }
  std::string s = strip_underscores(text);
  bool neg = !s.empty() && s[0] == '-';
  std::string body = !s.empty() && (s[0] == '-' || s[0] == '+') ? s.substr(1) : s;
  uint64_t sign = neg ? (bits == 32 ? 0x80000000ull : 0x8000000000000000ull) : 0;
  uint64_t exp = bits == 32 ? 0x7F800000ull : 0x7FF0000000000000ull;
  uint64_t mant = bits == 32 ? 0x007FFFFFull : 0x000FFFFFFFFFFFFFull;
  if (body == "inf") return std::to_string(sign | exp);
  if (body == "nan") return std::to_string(sign | exp | (mant + 1) / 2);
  if (body.rfind("nan:0x", 0) == 0) {
    uint64_t payload = parse_int_literal(body.substr(4), 64);
    if (payload == 0 || payload > mant) throw std::invalid_argument("NaN payload out of range: " + shown(text));
    return std::to_string(sign | exp | payload);
  }
  if (body.empty() || !(std::isdigit(static_cast<unsigned char>(body[0])))) throw std::invalid_argument("not a float: " + shown(text));
  const char* b = s.c_str();
  char* end = nullptr;
  errno = 0;
  if (bits == 32) {
    float f = std::strtof(b, &end);
    if (*end) throw std::invalid_argument("not a float: " + shown(text));
    if (std::isinf(f)) throw std::invalid_argument("float out of range: " + shown(text));
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return std::to_string(u);
  }
  double d = std::strtod(b, &end);
  if (*end) throw std::invalid_argument("not a float: " + shown(text));
  if (std::isinf(d)) throw std::invalid_argument("float out of range: " + shown(text));
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return std::to_string(u);
}

// ---------------------------------------------------------------------------------------------
// The translator.

namespace {

struct Def {
  std::string filename;
  int line = 0;
  size_t placeholder = 0;  // index of its module_definition command, erased once it is referenced
};

// A reason a value cannot be checked yet: the whole command is skipped with it.
struct SkipValue {
  std::string why;
};

class Translator {
 public:
  Translator(const std::string& file, ScriptModules& modules) : file_(file), modules_(modules) {
    stem_ = fs::path(file).filename().string();
    if (auto p = stem_.find('.'); p != std::string::npos) stem_ = stem_.substr(0, p);
  }

  json run(const std::vector<sexpr::Node>& script) {
    for (const auto& n : script) command(n);
    json out = json::array();
    for (size_t i = 0; i < cmds_.size(); ++i)
      if (!referenced_.count(i)) out.push_back(std::move(cmds_[i]));
    return json{{"source_filename", file_}, {"commands", std::move(out)}};
  }

 private:
  [[noreturn]] void fail(const sexpr::Node& n, const std::string& what) const {
    throw ScriptError(fmt::format("{}:{}: {}", file_, n.line, what));
  }
  const std::string& str(const sexpr::Node& n, const char* what) const {
    if (!n.is_string()) fail(n, fmt::format("{} expected (a string)", what));
    return n.text;
  }

  std::string write_module(const std::string& bytes) {
    std::string name = fmt::format("{}.{}.wasm", stem_, files_++);
    modules_.add(name, bytes);
    return name;
  }

  // (module $M? binary "..."*), (module definition $M? binary ...), (module $M? quote ...) or a
  // text module: fills `c` with filename / module_type; returns the name ("" if none).
  struct ModuleForm {
    bool definition = false, text = false;
    std::string name, filename;
  };
  ModuleForm module_form(const sexpr::Node& n) {
    ModuleForm m;
    size_t i = 1;
    if (i < n.size() && n[i].is_atom("definition")) {
      m.definition = true;
      ++i;
    }
    if (i < n.size() && n[i].is_symbol()) m.name = n[i++].text;
    if (i < n.size() && n[i].is_atom("binary")) {
      std::string bytes;
      for (++i; i < n.size(); ++i) bytes += str(n[i], "module bytes");
      m.filename = write_module(bytes);
    } else {
      m.text = true;  // (module quote ...) or the text format's fields
    }
    return m;
  }

  const Def& definition(const sexpr::Node& at, const std::string& name) {
    if (name.empty()) {
      if (!last_def_) fail(at, "module instance without a preceding module definition");
      referenced_.insert(last_def_->placeholder);
      return *last_def_;
    }
    auto it = defs_.find(name);
    if (it == defs_.end()) fail(at, "unknown module definition " + shown(name));
    referenced_.insert(it->second.placeholder);
    return it->second;
  }

  // (module instance $I? $M?): the definition it instantiates, and the instance's name.
  std::pair<const Def*, std::string> instance_form(const sexpr::Node& n) {
    std::vector<std::string> names;
    for (size_t i = 2; i < n.size(); ++i) {
      if (!n[i].is_symbol()) fail(n[i], "module instance takes names only");
      names.push_back(n[i].text);
    }
    if (names.size() > 2) fail(n, "module instance takes at most two names");
    std::string inst = names.size() == 2 ? names[0] : "";
    std::string def = names.empty() ? "" : names.back();
    return {&definition(n, def), inst};
  }
  static bool is_instance(const sexpr::Node& n) { return n.head() == "module" && n.size() >= 2 && n[1].is_atom("instance"); }

  // The module of an assertion: filename / module_type into `c`.
  void assertion_module(const sexpr::Node& n, json& c) {
    if (n.head() != "module") fail(n, "a module expected");
    if (is_instance(n)) {
      const Def* d = instance_form(n).first;
      c["filename"] = d->filename;
      c["module_type"] = "binary";
      return;
    }
    ModuleForm m = module_form(n);
    if (m.text) {
      c["module_type"] = "text";
      return;
    }
    c["filename"] = m.filename;
    c["module_type"] = "binary";
  }

  json number(const sexpr::Node& v, const std::string& type, bool pattern) {
    if (v.size() != 2 || !v[1].is_atom()) fail(v, "(" + type + ".const) takes one literal");
    try {
      if (type == "i32" || type == "i64") return {{"type", type}, {"value", std::to_string(parse_int_literal(v[1].text, type == "i32" ? 32 : 64))}};
      return {{"type", type}, {"value", parse_float_literal(v[1].text, type == "f32" ? 32 : 64, pattern)}};
    } catch (const std::invalid_argument& e) {
      fail(v, e.what());
    }
  }

  json v128(const sexpr::Node& v, bool pattern) {
    if (v.size() < 2 || !v[1].is_atom()) fail(v, "v128.const needs a lane shape");
    static const std::map<std::string, std::pair<std::string, int>> shapes = {
        {"i8x16", {"i8", 16}}, {"i16x8", {"i16", 8}}, {"i32x4", {"i32", 4}}, {"i64x2", {"i64", 2}}, {"f32x4", {"f32", 4}}, {"f64x2", {"f64", 2}}};
    auto it = shapes.find(v[1].text);
    if (it == shapes.end()) fail(v[1], "unknown v128 shape " + shown(v[1].text));
    auto [lane, count] = it->second;
    if (v.size() != static_cast<size_t>(count) + 2) fail(v, fmt::format("v128.const {} takes {} lanes", shown(v[1].text), count));
    json lanes = json::array();
    int width = lane == "i8" ? 8 : lane == "i16" ? 16 : (lane == "i32" || lane == "f32") ? 32 : 64;
    for (int i = 0; i < count; ++i) {
      const sexpr::Node& l = v[2 + i];
      if (!l.is_atom()) fail(l, "a lane literal expected");
      try {
        if (lane[0] == 'i') {
          // Integer lanes may be written signed or unsigned: -1 and 255 are the same i8 lane.
          lanes.push_back(std::to_string(parse_int_literal(l.text, width)));
        } else {
          lanes.push_back(parse_float_literal(l.text, width, pattern));
        }
      } catch (const std::invalid_argument& e) {
        fail(l, e.what());
      }
    }
    return {{"type", "v128"}, {"lane_type", lane}, {"value", lanes}};
  }

  // One argument or expected value. Values this interpreter has no type for throw SkipValue.
  json value(const sexpr::Node& v, bool pattern) {
    if (!v.is_list() || v.head().empty()) fail(v, "a value expected, like (i32.const 1)");
    const std::string& h = v.head();
    if (h == "i32.const" || h == "i64.const" || h == "f32.const" || h == "f64.const") return number(v, h.substr(0, 3), pattern);
    if (h == "v128.const") return v128(v, pattern);
    if (h == "either") {
      if (!pattern) fail(v, "either is a result pattern, not an argument");
      json alts = json::array();
      for (size_t i = 1; i < v.size(); ++i) alts.push_back(value(v[i], true));
      if (alts.empty()) fail(v, "either needs alternatives");
      return {{"type", "either"}, {"values", alts}};
    }
    if (h == "ref.null") {
      if (v.size() == 1) {
        if (!pattern) fail(v, "(ref.null) without a heap type is a result pattern");
        return {{"type", "refnull"}};
      }
      const std::string& ht = v[1].text;
      if (ht == "func" || ht == "nofunc") return {{"type", "funcref"}, {"value", "null"}};
      if (ht == "extern" || ht == "noextern") return {{"type", "externref"}, {"value", "null"}};
      if (ht == "exn" || ht == "noexn") return {{"type", "exnref"}, {"value", "null"}};
      return {{"type", "anyref"}, {"value", "null"}};  // any, none, eq, struct, array, i31, a type index
    }
    if (h == "ref.extern") {
      if (v.size() == 1) {
        if (!pattern) fail(v, "(ref.extern) without a number is a result pattern");
        return {{"type", "externref"}, {"value", "any"}};
      }
      try {
        return {{"type", "externref"}, {"value", std::to_string(parse_int_literal(v[1].text, 32))}};
      } catch (const std::invalid_argument& e) {
        fail(v[1], e.what());
      }
    }
    if (h == "ref.func") {
      if (!pattern) fail(v, "(ref.func) is a result pattern");
      return {{"type", "funcref"}, {"value", "any"}};
    }
    if (h == "ref.exn") {
      if (!pattern) fail(v, "(ref.exn) is a result pattern");
      return {{"type", "exnref"}, {"value", "any"}};
    }
    if (h == "ref.host") {  // a host reference in the any hierarchy (ref.extern's, internalised)
      if (v.size() < 2) fail(v, "(ref.host) needs a number");
      try {
        return {{"type", "anyref"}, {"value", std::to_string(parse_int_literal(v[1].text, 32))}};
      } catch (const std::invalid_argument& e) {
        fail(v[1], e.what());
      }
    }
    if (h == "ref.struct" || h == "ref.array" || h == "ref.i31" || h == "ref.eq" || h == "ref.any" || h == "ref") {
      if (!pattern) fail(v, "(" + shown(h) + ") is a result pattern");
      return {{"type", "anyref"}, {"value", h == "ref" ? "any" : h.substr(4)}};
    }
    fail(v, "unknown value " + shown(h));
  }

  json action(const sexpr::Node& n) {
    const std::string& h = n.head();
    if (h != "invoke" && h != "get") fail(n, "an action expected (invoke or get)");
    json a{{"type", h}};
    size_t i = 1;
    if (i < n.size() && n[i].is_symbol()) a["module"] = n[i++].text;
    if (i >= n.size()) fail(n, shown(h) + " needs an export name");
    a["field"] = str(n[i++], "an export name");
    json args = json::array();
    if (h == "get" && i < n.size()) fail(n[i], "get takes no arguments");
    for (; i < n.size(); ++i) args.push_back(value(n[i], false));
    a["args"] = args;
    return a;
  }

  void push(json c) { cmds_.push_back(std::move(c)); }

  void command(const sexpr::Node& n) {
    const std::string& h = n.head();
    json c{{"type", h}, {"line", n.line}};
    try {
      if (h == "module") {
        if (is_instance(n)) {
          auto [d, inst] = instance_form(n);
          c["type"] = "module";
          c["filename"] = d->filename;
          if (!inst.empty()) c["name"] = inst;
          push(std::move(c));
          return;
        }
        ModuleForm m = module_form(n);
        if (m.text) {
          c["module_type"] = "text";
          push(std::move(c));
          return;
        }
        c["filename"] = m.filename;
        if (m.definition) {
          c["type"] = "module_definition";
          Def d{m.filename, n.line, cmds_.size()};
          last_def_ = d;
          if (!m.name.empty()) defs_[m.name] = d;
          push(std::move(c));
          return;
        }
        if (!m.name.empty()) c["name"] = m.name;
        push(std::move(c));
        return;
      }
      if (h == "register") {
        if (n.size() < 2 || n.size() > 3) fail(n, "(register \"name\" $instance?)");
        c["as"] = str(n[1], "a registered name");
        if (n.size() == 3) {
          if (!n[2].is_symbol()) fail(n[2], "an instance name expected");
          c["name"] = n[2].text;
        }
        push(std::move(c));
        return;
      }
      if (h == "invoke" || h == "get") {
        c["type"] = "action";
        c["action"] = action(n);
        push(std::move(c));
        return;
      }
      if (h == "assert_return") {
        if (n.size() < 2) fail(n, "assert_return needs an action");
        c["action"] = action(n[1]);
        json want = json::array();
        for (size_t i = 2; i < n.size(); ++i) want.push_back(value(n[i], true));
        c["expected"] = want;
        push(std::move(c));
        return;
      }
      if (h == "assert_trap" || h == "assert_exhaustion" || h == "assert_exception") {
        if (n.size() < 2) fail(n, h + " needs an action");
        if (h != "assert_exception") {
          if (n.size() != 3) fail(n, h + " takes an action (or module) and a message");
          c["text"] = str(n[2], "a message");
        }
        if (h == "assert_trap" && n[1].head() == "module") {
          c["type"] = "assert_uninstantiable";
          assertion_module(n[1], c);
        } else {
          c["action"] = action(n[1]);
        }
        push(std::move(c));
        return;
      }
      if (h == "assert_invalid" || h == "assert_malformed" || h == "assert_unlinkable" || h == "assert_uninstantiable") {
        if (n.size() != 3) fail(n, h + " takes a module and a message");
        c["text"] = str(n[2], "a message");
        assertion_module(n[1], c);
        push(std::move(c));
        return;
      }
    } catch (const SkipValue& s) {
      push(json{{"type", h}, {"line", n.line}, {"skip", s.why}});
      return;
    }
    if (h.empty()) fail(n, "a command expected, like (module ...) or (assert_return ...)");
    push(json{{"type", h}, {"line", n.line}, {"skip", "script command " + shown(h) + " (not supported)"}});
  }

  std::string file_, stem_;
  ScriptModules& modules_;
  int files_ = 0;
  std::vector<json> cmds_;
  std::set<size_t> referenced_;
  std::map<std::string, Def> defs_;
  std::optional<Def> last_def_;
};

}  // namespace

json translate_script(const std::vector<sexpr::Node>& script, const std::string& file, ScriptModules& modules) {
  return Translator(file, modules).run(script);
}

json translate_script_file(const std::string& path, ScriptModules& modules) { return translate_script(sexpr::parse_file(path), path, modules); }

std::vector<uint8_t> ScriptModules::bytes(const std::string& name) const {
  if (auto it = held_.find(name); it != held_.end()) return {it->second.begin(), it->second.end()};
  if (dir_.empty()) throw std::runtime_error(fmt::format("no module {} in the translated script", name));
  std::string b = read_input_file((dir_ / name).string());
  return {b.begin(), b.end()};
}

}  // namespace dlab::wasm
