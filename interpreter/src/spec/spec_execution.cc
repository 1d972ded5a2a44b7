// The spec runner's execution stage: instantiates every module, performs every action and
// checks assert_return (NaN patterns included), assert_trap, assert_exhaustion,
// assert_uninstantiable, assert_unlinkable, assert_invalid and assert_malformed (binary).
// Commands from the 3.0 translator (spec_script.h) may carry "skip" (counted as skipped with that
// reason). A module this build cannot run (Unsupported at instantiation) is skipped, with the
// commands that depend on it.
#include "spec/spec_execution.h"

#include <bit>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "dispatchlab/interpreter/reference_text.h"
#include "dispatchlab/interpreter/validator.h"

namespace dlab::wasm {

namespace {

using json = nlohmann::json;

ValType type_of(const std::string& t) {
  if (t == "i32") return ValType::kI32;
  if (t == "i64") return ValType::kI64;
  if (t == "f32") return ValType::kF32;
  if (t == "f64") return ValType::kF64;
  if (t == "v128") return ValType::kV128;
  if (t == "funcref") return ValType::kFuncRef;
  if (t == "externref") return ValType::kExternRef;
  if (t == "exnref") return ref_type(true, kHeapExn);
  if (t == "anyref") return ref_type(true, kHeapAny);
  throw std::runtime_error("unknown value type " + t);
}

// v128 lanes as written by wast2json: each lane a decimal string of its bits.
std::pair<uint64_t, uint64_t> v128_bits(const json& v) {
  std::string lane = v.at("lane_type");
  const auto& lanes = v.at("value");
  size_t width = lane == "i8" ? 1 : lane == "i16" ? 2 : (lane == "i32" || lane == "f32") ? 4 : 8;
  uint8_t bytes[16] = {};
  for (size_t i = 0; i < lanes.size() && (i + 1) * width <= 16; ++i) {
    uint64_t x = std::stoull(lanes[i].get<std::string>());
    std::memcpy(bytes + i * width, &x, width);
  }
  uint64_t lo, hi;
  std::memcpy(&lo, bytes, 8);
  std::memcpy(&hi, bytes + 8, 8);
  return {lo, hi};
}

Value arg_value(const json& a) {
  Value v;
  v.type = type_of(a.at("type"));
  if (v.type == ValType::kV128) {
    auto [lo, hi] = v128_bits(a);
    v.lo = lo;
    v.hi = hi;
    return v;
  }
  std::string s = a.at("value");
  if (is_ref(v.type)) {
    // Host references are numbered by the test (runtime.h's ref::host encoding).
    v.lo = s == "null" ? 0 : ref::host(std::stoull(s));
    return v;
  }
  v.lo = std::stoull(s);
  return v;
}

bool nan_matches(uint64_t bits, int width, const std::string& pattern) {
  uint64_t exp = width == 32 ? 0x7F800000u : 0x7FF0000000000000ull;
  uint64_t quiet = width == 32 ? 0x00400000u : 0x0008000000000000ull;
  uint64_t mant = width == 32 ? 0x007FFFFFu : 0x000FFFFFFFFFFFFFull;
  if ((bits & exp) != exp) return false;
  if (pattern == "nan:canonical") return (bits & mant) == quiet;
  return (bits & quiet) != 0;  // nan:arithmetic
}

std::string show(const Value& v, const Instance* owner) {
  switch (v.type) {
    case ValType::kI32: return fmt::format("i32:{}", static_cast<uint32_t>(v.lo));
    case ValType::kI64: return fmt::format("i64:{}", v.lo);
    case ValType::kF32: return fmt::format("f32:{:#x}", static_cast<uint32_t>(v.lo));
    case ValType::kF64: return fmt::format("f64:{:#x}", v.lo);
    case ValType::kV128: return fmt::format("v128:{:#018x}{:016x}", v.hi, v.lo);
    default: return reference_text(v, owner);
  }
}

const char* kind_name(ExternKind k) {
  switch (k) {
    case ExternKind::kFunc: return "a function";
    case ExternKind::kTable: return "a table";
    case ExternKind::kMemory: return "a memory";
    case ExternKind::kGlobal: return "a global";
    case ExternKind::kTag: return "a tag";
  }
  return "an export of unknown kind";
}

bool value_matches(const Value& got, const json& want) {
  const std::string& kind = want.at("type").get_ref<const std::string&>();
  if (kind == "either") {  // relaxed SIMD: any one of the alternatives
    for (const auto& alt : want.at("values"))
      if (value_matches(got, alt)) return true;
    return false;
  }
  if (kind == "refnull") return is_ref(got.type) && got.lo == 0;
  ValType t = type_of(kind);
  // A reference result is judged by its value: its static type may be any reference type (a
  // typed function reference (ref $t) where the script says funcref).
  if (is_ref(t) ? !is_ref(got.type) : got.type != t) return false;
  if (t == ValType::kV128) {
    std::string lane = want.at("lane_type");
    if (lane == "f32" || lane == "f64") {
      int w = lane == "f32" ? 32 : 64;
      const auto& lanes = want.at("value");
      uint8_t bytes[16];
      std::memcpy(bytes, &got.lo, 8);
      std::memcpy(bytes + 8, &got.hi, 8);
      for (size_t i = 0; i < lanes.size(); ++i) {
        uint64_t bits = 0;
        std::memcpy(&bits, bytes + i * (w / 8), w / 8);
        std::string s = lanes[i];
        if (s.rfind("nan:", 0) == 0) {
          if (!nan_matches(bits, w, s)) return false;
        } else if (bits != std::stoull(s)) {
          return false;
        }
      }
      return true;
    }
    auto [lo, hi] = v128_bits(want);
    return got.lo == lo && got.hi == hi;
  }
  std::string s = want.at("value");
  if (is_ref(t)) {
    if (s == "null") return got.lo == 0;
    if (s == "any") return got.lo != 0;
    if (t == ValType::kFuncRef) return got.lo != 0;  // any function reference
    if (s == "i31") return ref::is_i31(got.lo);
    if (s == "eq") return ref::is_i31(got.lo) || ref::is_object(got.lo);
    if (s == "struct" || s == "array") {
      if (!ref::is_object(got.lo)) return false;
      return ref::object(got.lo)->rtt->kind == (s == "struct" ? TypeKind::kStruct : TypeKind::kArray);
    }
    return got.lo == ref::host(std::stoull(s));
  }
  if (s.rfind("nan:", 0) == 0) return nan_matches(got.lo, t == ValType::kF32 ? 32 : 64, s);
  uint64_t bits = std::stoull(s);
  if (t == ValType::kI32 || t == ValType::kF32) return static_cast<uint32_t>(got.lo) == static_cast<uint32_t>(bits);
  return got.lo == bits;
}

}  // namespace

std::string outcome_of(const std::function<void()>& step) {
  try {
    step();
    return "ok";
  } catch (const DecodeError& e) {
    return fmt::format("malformed: {} at byte {}", e.what(), e.offset());
  } catch (const ValidationError& e) {
    return std::string("invalid: ") + e.what();
  } catch (const LinkError& e) {
    return std::string("unlinkable: ") + e.what();
  } catch (const Unsupported& e) {
    return std::string("unsupported: ") + e.what();
  } catch (const ImplementationLimit& e) {
    return std::string("implementation limit: ") + e.what();
  } catch (const Trap& e) {
    return std::string("trap: ") + e.what();
  }
}

void execute_commands(const json& doc, const ScriptModules& modules, const EngineConfig& engine, SpecFileResult& res,
                      bool counting) {
  Runtime rt(engine);
  if (counting) rt.enable_profile();
  rt.register_module("spectest", spectest_module(rt));
  Instance* last = nullptr;
  std::map<std::string, Instance*> named;
  // Modules this build cannot run (Unsupported): their commands are skipped with the reason kept
  // here. Registered names of such modules: modules importing from them fail to link and are
  // skipped with the same reason.
  std::string last_unsupported;
  std::map<std::string, std::string> unsupported;
  std::map<std::string, std::string> unsupported_registered;

  auto load = [&](const json& c) -> Module {
    return decode_valid_module(modules.bytes(c.at("filename").get<std::string>()));
  };
  // "ok", or what went wrong, prefixed by its kind.
  auto instantiate = [&](const json& c, Instance** out) {
    return outcome_of([&] {
      Instance& inst = rt.instantiate(load(c));
      if (out) *out = &inst;
    });
  };
  auto fail = [&](int line, const std::string& why) {
    ++res.failed;
    res.failures.push_back(fmt::format("{}:{}: {}", res.file.empty() ? "script" : res.file, line, why));
  };
  const std::string kUnsupportedSkip = "needs an instruction this build cannot execute";
  // Why a module that did not instantiate is skipped rather than failed ("" if it is not): what
  // this build cannot run in it, or an import from a registered module that was itself skipped.
  auto skip_reason = [&](const json& c, const std::string& r) -> std::string {
    if (r.rfind("unsupported", 0) == 0) {
      // "unsupported: not supported yet: multi-memory (this module has 2 memories)": the feature,
      // without the module's particulars, so one reason counts every such module.
      const std::string yet = "unsupported: not supported yet: ";
      if (r.rfind(yet, 0) == 0) return "needs " + r.substr(yet.size(), r.find(" (") == std::string::npos ? std::string::npos : r.find(" (") - yet.size());
      return kUnsupportedSkip;
    }
    if (unsupported_registered.empty() || r.rfind("unlinkable", 0) != 0) return "";
    try {
      Module m = decode_module(modules.bytes(c.at("filename").get<std::string>()));
      for (const auto& im : m.imports)
        if (auto it = unsupported_registered.find(im.module); it != unsupported_registered.end()) return it->second;
    } catch (const DecodeError&) {
    }
    return "";
  };

  for (const auto& c : doc.at("commands")) {
    const int line = c.value("line", 0);
    // No exception leaves a command: whatever one throws (a malformed command, a runtime error
    // the checks above did not foresee) is a failure at its line, and the next command runs.
    try {
      std::string type = c.at("type");
      std::string module_type = c.value("module_type", "binary");
      if (c.contains("skip")) {
        ++res.skipped[c.at("skip").get<std::string>()];
        continue;
      }
      if (module_type == "text") {
        ++res.skipped["text-format module (not a binary test)"];
        continue;
      }
      if (type == "module_definition") {  // a definition never instantiated: decoded and validated
        std::string r = outcome_of([&] { load(c); });
        if (r == "ok") ++res.passed;
        else fail(line, "module should validate: " + r);
        continue;
      }
      if (type == "module") {
        Instance* inst = nullptr;
        std::string r = instantiate(c, &inst);
        std::string name = c.value("name", "");
        last_unsupported.clear();
        if (r == "ok") {
          ++res.passed;
          last = inst;
          if (!name.empty()) {
            named[name] = inst;
            unsupported.erase(name);
          }
        } else if (std::string why = skip_reason(c, r); !why.empty()) {
          ++res.skipped[why];
          last = nullptr;
          last_unsupported = why;
          if (!name.empty()) unsupported[name] = why;
        } else {
          last = nullptr;
          fail(line, "module should instantiate: " + r);
        }
        continue;
      }
      if (type == "register") {
        std::string from = c.value("name", "");
        bool skip = from.empty() ? !last_unsupported.empty() : unsupported.count(from) > 0;
        Instance* inst = from.empty() ? last : (named.count(from) ? named[from] : nullptr);
        if (skip) {
          std::string why = from.empty() ? last_unsupported : unsupported[from];
          ++res.skipped[why];
          // Imports of the registered name now fail as unknown; those modules are skipped too.
          unsupported[c.at("as").get<std::string>()] = "registered from an unsupported module";
          unsupported_registered[c.at("as").get<std::string>()] = why;
        } else if (inst) {
          rt.register_module(c.at("as"), inst->exports);
          ++res.passed;
        } else {
          fail(line, "register of a module that did not instantiate");
        }
        continue;
      }
      if (type == "assert_malformed" || type == "assert_invalid" || type == "assert_unlinkable" || type == "assert_uninstantiable") {
        std::string r = instantiate(c, nullptr);
        std::string want = type == "assert_malformed" ? "malformed" : type == "assert_invalid" ? "invalid" : type == "assert_unlinkable" ? "unlinkable" : "trap";
        // A module this build cannot run is skipped, even with the expected kind of error: the
        // rejection may be for what it cannot run, not for what the test checks.
        std::string why = r == "ok" ? "" : skip_reason(c, r);
        if (!why.empty()) {
          ++res.skipped[why];
        } else if (r.rfind(want, 0) == 0) {
          ++res.passed;
        } else {
          fail(line, fmt::format("expected {} (\"{}\"), got {}", want, c.value("text", ""), r));
        }
        continue;
      }
      // Actions: invoke or get, alone or inside an assertion.
      const json& action = c.at("action");
      std::string target = action.value("module", "");
      bool target_unsupported = target.empty() ? !last_unsupported.empty() : unsupported.count(target) > 0;
      Instance* inst = target.empty() ? last : (named.count(target) ? named[target] : nullptr);
      if (target_unsupported) {
        ++res.skipped[target.empty() ? last_unsupported : unsupported[target]];
        continue;
      }
      if (!inst) {
        fail(line, "action on a module that did not instantiate");
        continue;
      }
      std::string field = action.at("field");
      auto ex = inst->exports.find(field);
      if (ex == inst->exports.end()) {
        fail(line, "no export named " + field);
        continue;
      }
      // An action names an export of the kind it needs (get: a global; invoke: a function): a
      // script that names another kind fails here, counted at its line, and the file goes on.
      const bool get = action.at("type") == "get";
      const ExternKind needed = get ? ExternKind::kGlobal : ExternKind::kFunc;
      if (ex->second.kind != needed || (get ? ex->second.global == nullptr : ex->second.func == nullptr)) {
        fail(line, fmt::format("export {} is {}, not {}", field, kind_name(ex->second.kind), kind_name(needed)));
        continue;
      }
      std::vector<Value> got;
      std::string trap;
      bool exhausted = false, exception = false;
      try {
        if (get) {
          const GlobalInst* g = ex->second.global;
          got.push_back(Value{g->type.type, g->lo, g->hi});
        } else {
          std::vector<Value> args;
          for (const auto& a : action.at("args")) args.push_back(arg_value(a));
          got = rt.invoke(ex->second.func, args);
        }
      } catch (const Exception& e) {  // a wasm exception no handler caught
        trap = e.what();
        exception = true;
      } catch (const Trap& e) {
        trap = e.what();
        exhausted = trap == "call stack exhausted";
      } catch (const std::invalid_argument& e) {  // the script's arguments do not fit the function
        fail(line, fmt::format("{}: {}", field, e.what()));
        continue;
      }
      if (type == "assert_exception") {
        if (exception) ++res.passed;
        else fail(line, fmt::format("{}: expected an exception, got {}", field, trap.empty() ? "a result" : "trap " + trap));
        continue;
      }
      if (type == "action") {
        if (trap.empty()) ++res.passed;
        else fail(line, "action trapped: " + trap);
      } else if (type == "assert_return") {
        if (!trap.empty()) {
          fail(line, fmt::format("{}: trapped ({}) instead of returning", field, trap));
          continue;
        }
        const auto& want = c.at("expected");
        bool ok = got.size() == want.size();
        for (size_t i = 0; ok && i < got.size(); ++i) ok = value_matches(got[i], want[i]);
        if (ok) {
          ++res.passed;
        } else {
          std::string g;
          for (const auto& v : got) g += show(v, inst) + " ";
          fail(line, fmt::format("{}: expected {}, got {}", field, want.dump(), g));
        }
      } else if (type == "assert_trap" || type == "assert_exhaustion") {
        std::string text = c.value("text", "");
        bool ok = type == "assert_exhaustion" ? exhausted
                                              : !trap.empty() && (trap.rfind(text, 0) == 0 || text.rfind(trap, 0) == 0);
        if (ok) ++res.passed;
        else fail(line, fmt::format("{}: expected trap \"{}\", got {}", field, text, trap.empty() ? "a result" : "trap " + trap));
      } else {
        ++res.skipped["unknown command " + type];
      }
    } catch (const std::exception& e) {
      fail(line, e.what());
    }
  }
}

}  // namespace dlab::wasm
