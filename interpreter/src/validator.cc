// The validation algorithm of the WebAssembly spec's appendix: an operand stack of value types
// (Unknown below an unreachable point) and a control stack of frames with their label types.
#include "dispatchlab/interpreter/validator.h"

#include <optional>
#include <set>

#include <fmt/format.h>

#include "binary_reader.h"

namespace dlab::wasm {

namespace {

using VT = ValType;
constexpr uint8_t kUnknown = 0;  // stands for any type below an unreachable point

struct Ctx {
  const Module& m;
  std::vector<uint32_t> func_types;  // type index of every function (imports first)
  std::vector<TableType> tables;
  uint32_t memories = 0;
  std::vector<GlobalType> globals;
  uint32_t imported_globals = 0;
  std::set<uint32_t> refs;  // functions that ref.func may name
  explicit Ctx(const Module& mod) : m(mod) {}
};

[[noreturn]] void invalid(const std::string& what) { throw ValidationError(what); }

bool is_num(uint8_t t) { return t == 0x7F || t == 0x7E || t == 0x7D || t == 0x7C; }
bool is_vec(uint8_t t) { return t == 0x7B; }
bool is_ref(uint8_t t) { return t == 0x70 || t == 0x6F; }

const FuncType& type_at(const Ctx& c, uint32_t idx) {
  if (idx >= c.m.types.size()) invalid("unknown type");
  return c.m.types[idx];
}


struct Frame {
  uint8_t opcode;
  std::vector<uint8_t> start, end;
  size_t height;
  bool unreachable = false;
};

class FunctionValidator {
 public:
  // locals: run-length (count, type), parameters first; a function may declare up to 2^32 - 1.
  FunctionValidator(const Ctx& c, const FuncType& ft, const std::vector<std::pair<uint32_t, ValType>>& locals) : c_(c) {
    for (auto r : ft.results) results_.push_back(static_cast<uint8_t>(r));
    uint64_t end = 0;
    for (const auto& [n, t] : locals) {
      end += n;
      local_runs_.emplace_back(end, static_cast<uint8_t>(t));
    }
  }

  // Validates an expression whose result must be `results`. const_expr: only constant instructions.
  void run(const Expr& e, const std::vector<uint8_t>& results, bool const_expr) {
    const_ = const_expr;
    BinaryReader r(e.bytes.data(), e.bytes.size());
    push_ctrl(0x02, {}, results);
    while (!ctrls_.empty()) {
      if (r.at_end()) invalid("END opcode expected");
      instruction(r);
    }
  }

 private:
  // ---- operand and control stacks ----
  void push(uint8_t t) { vals_.push_back(t); }
  uint8_t pop() {
    if (vals_.size() == ctrls_.back().height) {
      if (ctrls_.back().unreachable) return kUnknown;
      invalid("type mismatch");
    }
    uint8_t t = vals_.back();
    vals_.pop_back();
    return t;
  }
  uint8_t pop(uint8_t expect) {
    uint8_t t = pop_keep(expect);
    return t == kUnknown ? expect : t;
  }
  // As pop(expect), but an unknown operand stays unknown (br_table re-pushes what it popped).
  uint8_t pop_keep(uint8_t expect) {
    uint8_t t = pop();
    if (t != expect && t != kUnknown && expect != kUnknown) invalid("type mismatch");
    return t;
  }
  void push(const std::vector<uint8_t>& ts) {
    for (auto t : ts) push(t);
  }
  void pop(const std::vector<uint8_t>& ts) {
    for (size_t i = ts.size(); i-- > 0;) pop(ts[i]);
  }
  void push_ctrl(uint8_t op, std::vector<uint8_t> in, std::vector<uint8_t> out) {
    ctrls_.push_back({op, in, std::move(out), vals_.size(), false});
    push(in);
  }
  Frame pop_ctrl() {
    if (ctrls_.empty()) invalid("type mismatch");
    Frame f = ctrls_.back();
    pop(f.end);
    if (vals_.size() != f.height) invalid("type mismatch");
    ctrls_.pop_back();
    return f;
  }
  const std::vector<uint8_t>& label_types(const Frame& f) { return f.opcode == 0x03 ? f.start : f.end; }
  void unreachable() {
    vals_.resize(ctrls_.back().height);
    ctrls_.back().unreachable = true;
  }
  const Frame& label(uint32_t depth) {
    if (depth >= ctrls_.size()) invalid("unknown label");
    return ctrls_[ctrls_.size() - 1 - depth];
  }

  // ---- helpers ----
  std::pair<std::vector<uint8_t>, std::vector<uint8_t>> block_type(BinaryReader& r) {
    uint8_t b = r.peek();
    if (b == 0x40) {
      r.u8();
      return {};
    }
    if (b == 0x7F || b == 0x7E || b == 0x7D || b == 0x7C || b == 0x7B || b == 0x70 || b == 0x6F) {
      r.u8();
      return {{}, {b}};
    }
    int64_t idx = r.s33();
    if (idx < 0) invalid("malformed block type");
    const FuncType& ft = type_at(c_, static_cast<uint32_t>(idx));
    std::vector<uint8_t> in, out;
    for (auto t : ft.params) in.push_back(static_cast<uint8_t>(t));
    for (auto t : ft.results) out.push_back(static_cast<uint8_t>(t));
    return {in, out};
  }
  void memory_needed() {
    if (c_.memories == 0) invalid("unknown memory");
  }
  void memarg(BinaryReader& r, uint32_t natural_log2) {
    memory_needed();
    uint32_t align = r.u32();
    r.u32();
    if (align > natural_log2) invalid("alignment must not be larger than natural");
  }
  const TableType& table(uint32_t idx) {
    if (idx >= c_.tables.size()) invalid(fmt::format("unknown table {}", idx));
    return c_.tables[idx];
  }
  void need_nonconst() {
    if (const_) invalid("constant expression required");
  }
  void call_type(uint32_t type_idx, bool tail) {
    const FuncType& ft = type_at(c_, type_idx);
    for (size_t i = ft.params.size(); i-- > 0;) pop(static_cast<uint8_t>(ft.params[i]));
    if (tail) {
      std::vector<uint8_t> res;
      for (auto t : ft.results) res.push_back(static_cast<uint8_t>(t));
      if (res != results_) invalid("type mismatch");
      unreachable();
    } else {
      for (auto t : ft.results) push(static_cast<uint8_t>(t));
    }
  }
  void unop(uint8_t in, uint8_t out) { pop(in); push(out); }
  void binop(uint8_t in, uint8_t out) { pop(in); pop(in); push(out); }

  void instruction(BinaryReader& r) {
    uint8_t op = r.u8();
    constexpr uint8_t I32 = 0x7F, I64 = 0x7E, F32 = 0x7D, F64 = 0x7C;
    bool is_const_instr = op == 0x41 || op == 0x42 || op == 0x43 || op == 0x44 || op == 0xD0 || op == 0xD2 || op == 0x23 ||
                          op == 0x0B || op == 0xFD;  // 0xFD: only v128.const, checked below
    if (const_ && !is_const_instr) invalid("constant expression required");
    if (const_ && op == 0xFD) {
      if (r.u32() != 12) invalid("constant expression required");
      r.bytes(16);
      push(0x7B);
      return;
    }
    switch (op) {
      case 0x00: unreachable(); return;
      case 0x01: return;
      case 0x02: case 0x03: {
        auto [in, out] = block_type(r);
        pop(in);
        push_ctrl(op, in, out);
        return;
      }
      case 0x04: {
        auto [in, out] = block_type(r);
        pop(I32);
        pop(in);
        push_ctrl(op, in, out);
        return;
      }
      case 0x05: {
        Frame f = pop_ctrl();
        if (f.opcode != 0x04) invalid("else without if");
        push_ctrl(0x05, f.start, f.end);
        return;
      }
      case 0x0B: {
        Frame f = pop_ctrl();
        // An `if` without `else` must leave its parameters as its results.
        if (f.opcode == 0x04 && f.start != f.end) invalid("type mismatch");
        push(f.end);
        return;
      }
      case 0x0C: {
        const Frame& l = label(r.u32());
        pop(label_types(l));
        unreachable();
        return;
      }
      case 0x0D: {
        const Frame& l = label(r.u32());
        pop(I32);
        auto ts = label_types(l);
        pop(ts);
        push(ts);
        return;
      }
      case 0x0E: {
        uint32_t n = r.u32();
        std::vector<uint32_t> targets(n);
        for (auto& t : targets) t = r.u32();
        uint32_t def = r.u32();
        pop(I32);
        size_t arity = label_types(label(def)).size();
        for (uint32_t t : targets) {
          const auto& ts = label_types(label(t));
          if (ts.size() != arity) invalid("type mismatch");
          // Each target takes the same operands; check them without consuming.
          std::vector<uint8_t> popped;
          for (size_t i = ts.size(); i-- > 0;) popped.push_back(pop_keep(ts[i]));
          for (size_t i = popped.size(); i-- > 0;) push(popped[i]);
        }
        pop(label_types(label(def)));
        unreachable();
        return;
      }
      case 0x0F: pop(results_); unreachable(); return;
      case 0x10: case 0x12: {
        uint32_t f = r.u32();
        if (f >= c_.func_types.size()) invalid("unknown function");
        call_type(c_.func_types[f], op == 0x12);
        return;
      }
      case 0x11: case 0x13: {
        uint32_t type_idx = r.u32();
        const TableType& t = table(r.u32());
        if (t.element != VT::kFuncRef) invalid("type mismatch");
        type_at(c_, type_idx);
        pop(I32);
        call_type(type_idx, op == 0x13);
        return;
      }
      case 0x1A: pop(); return;
      case 0x1B: {
        pop(I32);
        uint8_t a = pop(), b = pop();
        auto plain = [](uint8_t t) { return t == kUnknown || is_num(t) || is_vec(t); };
        if (!plain(a) || !plain(b)) invalid("type mismatch");
        if (a != b && a != kUnknown && b != kUnknown) invalid("type mismatch");
        push(a == kUnknown ? b : a);
        return;
      }
      case 0x1C: {
        uint32_t n = r.u32();
        if (n != 1) invalid("invalid result arity");
        uint8_t t = r.u8();
        pop(I32);
        pop(t);
        pop(t);
        push(t);
        return;
      }
      case 0x20: case 0x21: case 0x22: {
        uint32_t i = r.u32();
        uint8_t t = local_type(i);
        if (op == 0x20) push(t);
        else if (op == 0x21) pop(t);
        else { pop(t); push(t); }
        return;
      }
      case 0x23: case 0x24: {
        uint32_t g = r.u32();
        if (g >= c_.globals.size()) invalid("unknown global");
        if (const_ && g >= c_.imported_globals) invalid("unknown global");  // constant expressions see imported globals only
        if (const_ && c_.globals[g].mutable_) invalid("constant expression required");
        uint8_t t = static_cast<uint8_t>(c_.globals[g].type);
        if (op == 0x23) push(t);
        else {
          if (!c_.globals[g].mutable_) invalid("global is immutable");
          pop(t);
        }
        return;
      }
      case 0x25: case 0x26: {
        uint8_t t = static_cast<uint8_t>(table(r.u32()).element);
        if (op == 0x25) { pop(I32); push(t); }
        else { pop(t); pop(I32); }
        return;
      }
      case 0x3F: r.u8(); memory_needed(); push(I32); return;
      case 0x40: r.u8(); memory_needed(); pop(I32); push(I32); return;
      case 0x41: r.s32(); push(I32); return;
      case 0x42: r.s64(); push(I64); return;
      case 0x43: r.bytes(4); push(F32); return;
      case 0x44: r.bytes(8); push(F64); return;
      case 0xD0: {
        uint8_t t = r.u8();
        push(t);
        return;
      }
      case 0xD1: {
        uint8_t t = pop();
        if (t != kUnknown && !is_ref(t)) invalid("type mismatch");
        push(I32);
        return;
      }
      case 0xD2: {
        uint32_t f = r.u32();
        if (f >= c_.func_types.size()) invalid("unknown function");
        if (!const_ && !c_.refs.count(f)) invalid("undeclared function reference");
        push(0x70);
        return;
      }
      case 0xFC: misc(r); return;
      case 0xFD: simd(r); return;
      default: break;
    }
    if (op >= 0x28 && op <= 0x3E) {
      // loads: type, natural alignment (log2); stores likewise
      static const struct { uint8_t t; uint32_t align; bool store; } mem[] = {
          {I32, 2, 0}, {I64, 3, 0}, {F32, 2, 0}, {F64, 3, 0}, {I32, 0, 0}, {I32, 0, 0}, {I32, 1, 0}, {I32, 1, 0},
          {I64, 0, 0}, {I64, 0, 0}, {I64, 1, 0}, {I64, 1, 0}, {I64, 2, 0}, {I64, 2, 0},
          {I32, 2, 1}, {I64, 3, 1}, {F32, 2, 1}, {F64, 3, 1}, {I32, 0, 1}, {I32, 1, 1}, {I64, 0, 1}, {I64, 1, 1}, {I64, 2, 1}};
      const auto& d = mem[op - 0x28];
      memarg(r, d.align);
      if (d.store) { pop(d.t); pop(I32); }
      else { pop(I32); push(d.t); }
      return;
    }
    if (op == 0x45) return unop(I32, I32);
    if (op >= 0x46 && op <= 0x4F) return binop(I32, I32);
    if (op == 0x50) return unop(I64, I32);
    if (op >= 0x51 && op <= 0x5A) return binop(I64, I32);
    if (op >= 0x5B && op <= 0x60) return binop(F32, I32);
    if (op >= 0x61 && op <= 0x66) return binop(F64, I32);
    if (op >= 0x67 && op <= 0x69) return unop(I32, I32);
    if (op >= 0x6A && op <= 0x78) return binop(I32, I32);
    if (op >= 0x79 && op <= 0x7B) return unop(I64, I64);
    if (op >= 0x7C && op <= 0x8A) return binop(I64, I64);
    if (op >= 0x8B && op <= 0x91) return unop(F32, F32);
    if (op >= 0x92 && op <= 0x98) return binop(F32, F32);
    if (op >= 0x99 && op <= 0x9F) return unop(F64, F64);
    if (op >= 0xA0 && op <= 0xA6) return binop(F64, F64);
    if (op >= 0xA7 && op <= 0xBF) {
      static const uint8_t conv[][2] = {
          {I64, I32}, {F32, I32}, {F32, I32}, {F64, I32}, {F64, I32},                  // a7-ab
          {I32, I64}, {I32, I64}, {F32, I64}, {F32, I64}, {F64, I64}, {F64, I64},      // ac-b1
          {I32, F32}, {I32, F32}, {I64, F32}, {I64, F32}, {F64, F32},                  // b2-b6
          {I32, F64}, {I32, F64}, {I64, F64}, {I64, F64}, {F32, F64},                  // b7-bb
          {F32, I32}, {F64, I64}, {I32, F32}, {I64, F64}};                             // bc-bf
      return unop(conv[op - 0xA7][0], conv[op - 0xA7][1]);
    }
    if (op == 0xC0 || op == 0xC1) return unop(I32, I32);
    if (op >= 0xC2 && op <= 0xC4) return unop(I64, I64);
    invalid(fmt::format("illegal opcode {:#04x}", op));
  }

  // SIMD (0xFD prefix): lane immediates, alignment and operand types per sub-opcode.
  void simd(BinaryReader& r) {
    constexpr uint8_t I32 = 0x7F, I64 = 0x7E, F32 = 0x7D, F64 = 0x7C, V = 0x7B;
    uint32_t op = r.u32();
    auto lane = [&](uint32_t lanes) {
      if (r.u8() >= lanes) invalid("invalid lane index");
    };
    auto un = [&] { pop(V); push(V); };
    auto bin = [&] { pop(V); pop(V); push(V); };
    auto test = [&] { pop(V); push(I32); };
    auto shift = [&] { pop(I32); pop(V); push(V); };
    if (op <= 10) {  // loads
      static const uint32_t align[] = {4, 3, 3, 3, 3, 3, 3, 0, 1, 2, 3};
      memarg(r, align[op]);
      pop(I32);
      push(V);
      return;
    }
    switch (op) {
      case 11: memarg(r, 4); pop(V); pop(I32); return;
      case 12: r.bytes(16); push(V); return;
      case 13: for (int i = 0; i < 16; ++i) lane(32); bin(); return;
      case 14: bin(); return;
      case 15: case 16: case 17: pop(I32); push(V); return;
      case 18: pop(I64); push(V); return;
      case 19: pop(F32); push(V); return;
      case 20: pop(F64); push(V); return;
      case 21: case 22: lane(16); pop(V); push(I32); return;
      case 23: lane(16); pop(I32); pop(V); push(V); return;
      case 24: case 25: lane(8); pop(V); push(I32); return;
      case 26: lane(8); pop(I32); pop(V); push(V); return;
      case 27: lane(4); pop(V); push(I32); return;
      case 28: lane(4); pop(I32); pop(V); push(V); return;
      case 29: lane(2); pop(V); push(I64); return;
      case 30: lane(2); pop(I64); pop(V); push(V); return;
      case 31: lane(4); pop(V); push(F32); return;
      case 32: lane(4); pop(F32); pop(V); push(V); return;
      case 33: lane(2); pop(V); push(F64); return;
      case 34: lane(2); pop(F64); pop(V); push(V); return;
      case 82: pop(V); pop(V); pop(V); push(V); return;
      case 84: case 85: case 86: case 87: {
        static const uint32_t align[] = {0, 1, 2, 3}, lanes[] = {16, 8, 4, 2};
        memarg(r, align[op - 84]);
        lane(lanes[op - 84]);
        pop(V);
        pop(I32);
        push(V);
        return;
      }
      case 88: case 89: case 90: case 91: {
        static const uint32_t align[] = {0, 1, 2, 3}, lanes[] = {16, 8, 4, 2};
        memarg(r, align[op - 88]);
        lane(lanes[op - 88]);
        pop(V);
        pop(I32);
        return;
      }
      case 92: memarg(r, 2); pop(I32); push(V); return;
      case 93: memarg(r, 3); pop(I32); push(V); return;
      case 83: case 99: case 100: case 131: case 132: case 163: case 164: case 195: case 196: test(); return;
      case 107: case 108: case 109: case 139: case 140: case 141: case 171: case 172: case 173: case 203: case 204: case 205:
        shift();
        return;
      case 154: case 162: case 165: case 166: case 175: case 176: case 178: case 179: case 180: case 187: case 194: case 197:
      case 198: case 207: case 208: case 210: case 211: case 212: case 226: case 238:
        invalid("illegal opcode");
      default: break;
    }
    static const std::set<uint32_t> unary = {77,  94,  95,  96,  97,  98,  103, 104, 105, 106, 116, 117, 122, 124, 125, 126,
                                             127, 128, 129, 135, 136, 137, 138, 148, 160, 161, 167, 168, 169, 170, 192, 193,
                                             199, 200, 201, 202, 224, 225, 227, 236, 237, 239, 248, 249, 250, 251, 252, 253,
                                             254, 255};
    if (unary.count(op)) return un();
    if (op <= 255) return bin();  // every remaining defined sub-opcode is binary
    invalid("illegal opcode");
  }

  void misc(BinaryReader& r) {
    constexpr uint8_t I32 = 0x7F, I64 = 0x7E, F32 = 0x7D, F64 = 0x7C;
    uint32_t sub = r.u32();
    auto elem = [&](uint32_t i) -> const ElemSegment& {
      if (i >= c_.m.elements.size()) invalid("unknown elem segment");
      return c_.m.elements[i];
    };
    auto data = [&](uint32_t i) {
      size_t n = c_.m.data_count ? *c_.m.data_count : c_.m.data.size();
      if (i >= n) invalid("unknown data segment");
    };
    switch (sub) {
      case 0: case 1: return unop(F32, I32);
      case 2: case 3: return unop(F64, I32);
      case 4: case 5: return unop(F32, I64);
      case 6: case 7: return unop(F64, I64);
      case 8: data(r.u32()); r.u8(); memory_needed(); pop(I32); pop(I32); pop(I32); return;
      case 9: data(r.u32()); return;
      case 10: r.u8(); r.u8(); memory_needed(); pop(I32); pop(I32); pop(I32); return;
      case 11: r.u8(); memory_needed(); pop(I32); pop(I32); pop(I32); return;
      case 12: {
        const ElemSegment& e = elem(r.u32());
        const TableType& t = table(r.u32());
        if (e.type != t.element) invalid("type mismatch");
        pop(I32); pop(I32); pop(I32);
        return;
      }
      case 13: elem(r.u32()); return;
      case 14: {
        const TableType& dst = table(r.u32());
        const TableType& src = table(r.u32());
        if (dst.element != src.element) invalid("type mismatch");
        pop(I32); pop(I32); pop(I32);
        return;
      }
      case 15: { uint8_t t = static_cast<uint8_t>(table(r.u32()).element); pop(I32); pop(t); push(I32); return; }
      case 16: table(r.u32()); push(I32); return;
      case 17: { uint8_t t = static_cast<uint8_t>(table(r.u32()).element); pop(I32); pop(t); pop(I32); return; }
      default: invalid("illegal opcode");
    }
  }

  uint8_t local_type(uint32_t i) const {
    for (const auto& [end, t] : local_runs_)
      if (i < end) return t;
    invalid("unknown local");
  }

  const Ctx& c_;
  std::vector<std::pair<uint64_t, uint8_t>> local_runs_;
  std::vector<uint8_t> results_, vals_;
  std::vector<Frame> ctrls_;
  bool const_ = false;
};

void const_expr(const Ctx& c, const Expr& e, ValType t) {
  FunctionValidator v(c, FuncType{}, {});
  v.run(e, {static_cast<uint8_t>(t)}, true);
}

void check_limits(const Limits& l, uint64_t bound, const char* too_big) {
  if (l.min > bound || (l.max && *l.max > bound)) invalid(too_big);
  if (l.max && *l.max < l.min) invalid("size minimum must not be greater than maximum");
}

}  // namespace

void validate_module(const Module& m) {
  Ctx c(m);
  for (const auto& im : m.imports) {
    switch (im.kind) {
      case ExternKind::kFunc: type_at(c, im.func_type); c.func_types.push_back(im.func_type); break;
      case ExternKind::kTable: check_limits(im.table.limits, 0xFFFFFFFFull, "table size"); c.tables.push_back(im.table); break;
      case ExternKind::kMemory:
        check_limits(im.memory, 65536, "memory size must be at most 65536 pages (4GiB)");
        ++c.memories;
        break;
      case ExternKind::kGlobal: c.globals.push_back(im.global); ++c.imported_globals; break;
    }
  }
  for (uint32_t t : m.functions) {
    type_at(c, t);
    c.func_types.push_back(t);
  }
  for (const auto& t : m.tables) {
    check_limits(t.limits, 0xFFFFFFFFull, "table size");
    c.tables.push_back(t);
  }
  for (const auto& mem : m.memories) {
    check_limits(mem, 65536, "memory size must be at most 65536 pages (4GiB)");
    ++c.memories;
  }
  if (c.memories > 1) invalid("multiple memories");
  // Functions a body may name with ref.func: those referenced outside function bodies.
  auto collect_refs = [&](const Expr& e) {
    // Constant expressions are one instruction and `end`: only a leading ref.func names a function.
    if (e.bytes.size() > 1 && e.bytes[0] == 0xD2) {
      BinaryReader r(e.bytes.data() + 1, e.bytes.size() - 1);
      c.refs.insert(r.u32());
    }
  };
  for (const auto& g : m.globals) collect_refs(g.init);
  for (const auto& e : m.elements)
    for (const auto& x : e.init) collect_refs(x);
  for (const auto& ex : m.exports)
    if (ex.kind == ExternKind::kFunc) c.refs.insert(ex.index);
  // Globals: each initialiser sees the imported globals only.
  for (const auto& g : m.globals) {
    const_expr(c, g.init, g.type.type);
    c.globals.push_back(g.type);
  }
  std::set<std::string> names;
  for (const auto& ex : m.exports) {
    if (!names.insert(ex.name).second) invalid("duplicate export name");
    switch (ex.kind) {
      case ExternKind::kFunc: if (ex.index >= c.func_types.size()) invalid("unknown function"); break;
      case ExternKind::kTable: if (ex.index >= c.tables.size()) invalid("unknown table"); break;
      case ExternKind::kMemory: if (ex.index >= c.memories) invalid("unknown memory"); break;
      case ExternKind::kGlobal: if (ex.index >= c.globals.size()) invalid("unknown global"); break;
    }
  }
  if (m.start) {
    if (*m.start >= c.func_types.size()) invalid("unknown function");
    const FuncType& ft = type_at(c, c.func_types[*m.start]);
    if (!ft.params.empty() || !ft.results.empty()) invalid("start function");
  }
  for (const auto& e : m.elements) {
    for (const auto& x : e.init) const_expr(c, x, e.type);
    if (e.mode == ElemSegment::kActive) {
      if (e.table >= c.tables.size()) invalid("unknown table");
      if (c.tables[e.table].element != e.type) invalid("type mismatch");
      const_expr(c, e.offset, ValType::kI32);
    }
  }
  for (const auto& d : m.data)
    if (d.mode == DataSegment::kActive) {
      if (d.memory >= c.memories) invalid("unknown memory");
      const_expr(c, d.offset, ValType::kI32);
    }
  for (size_t i = 0; i < m.code.size(); ++i) {
    const FuncType& ft = type_at(c, m.functions[i]);
    std::vector<std::pair<uint32_t, ValType>> locals;
    for (auto p : ft.params) locals.emplace_back(1, p);
    for (const auto& [n, t] : m.code[i].locals) {
      locals.emplace_back(n, t);
    }
    std::vector<uint8_t> results;
    for (auto r : ft.results) results.push_back(static_cast<uint8_t>(r));
    FunctionValidator v(c, ft, locals);
    v.run(m.code[i].code, results, false);
  }
}

}  // namespace dlab::wasm
