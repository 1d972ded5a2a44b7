// The validation algorithm of the WebAssembly spec's appendix: an operand stack of value types
// (Unknown below an unreachable point) and a control stack of frames with their label types, over
// one function body or constant expression (validation.h's context; validator.cc the module).
#include <algorithm>
#include <cstring>
#include <span>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "decode/instruction_reader.h"
#include "validate/validation.h"

namespace dlab::wasm::validate_impl {

// A control frame. Its start types (a block's parameters) and end types (its results) are in the
// validator's frame_types_, a stack beside the control stack (frames close in the order they
// open), so that opening a block allocates nothing: a large module opens millions.
struct Frame {
  Opcode opcode;  // what opened it: block (the function's body too), loop, if_, else_ or try_table
  uint32_t start_at, start_n, end_at, end_n;  // in frame_types_
  size_t height;
  bool unreachable = false;
  size_t inits = 0;  // non-defaultable locals set before this frame began (FunctionValidator::set_locals_)
};

namespace {

// The value types the rules below name (T holds a ValType's code, or a reference type's).
constexpr T I32 = static_cast<T>(ValType::kI32), I64 = static_cast<T>(ValType::kI64);

}  // namespace

// One validator for every body and constant expression of a module (BodyValidator): its stacks
// are cleared, not freed, between them.
class FunctionValidator {
 public:
  explicit FunctionValidator(const Ctx& c) : c_(c) {}

  // A function body against its type. locals: run-length (count, type), parameters first; a
  // function may declare up to 2^32 - 1.
  void function(const FuncType& ft, const std::vector<std::pair<uint32_t, ValType>>& locals, const Expr& body) {
    results_.clear();
    for (auto r : ft.results) results_.push_back(static_cast<T>(r));
    local_runs_.clear();
    local_types_.clear();
    uint64_t end = 0;
    for (const auto& [n, t] : locals) {
      end += n;
      local_runs_.emplace_back(end, static_cast<T>(t));
      // The first kFlatLocals locals' types one per index (a local.get reads one instead of
      // walking the runs); a function may declare 2^32 - 1, the runs cover the rest.
      if (local_types_.size() < kFlatLocals) local_types_.insert(local_types_.end(), std::min<uint64_t>(n, kFlatLocals - local_types_.size()), static_cast<T>(t));
    }
    params_ = ft.params.size();
    run(body, false);
  }
  // A constant expression whose result is a `t`.
  void constant(const Expr& e, ValType t) {
    results_.assign(1, static_cast<T>(t));
    local_runs_.clear();
    local_types_.clear();
    params_ = 0;
    run(e, true);
  }

 private:
  // Validates an expression whose result must be results_. const_expr: only constant instructions.
  void run(const Expr& e, bool const_expr) {
    const_ = const_expr;
    vals_.clear();
    ctrls_.clear();
    frame_types_.clear();
    initialised_.clear();
    set_locals_.clear();
    BinaryReader r(e.bytes.data(), e.bytes.size());
    const uint32_t at = static_cast<uint32_t>(frame_types_.size());
    frame_types_.insert(frame_types_.end(), results_.begin(), results_.end());
    open(Opcode::block, at, 0, static_cast<uint32_t>(results_.size()));
    while (!ctrls_.empty()) {
      if (r.at_end()) invalid("END opcode expected");
      instruction(read_instruction(r));
    }
    // A body the decoder left unread (BodyReading::kDeferred) ends at its final `end`; what follows
    // is malformed, and decode_valid_module's second reading says how.
    if (!r.at_end()) invalid("section size mismatch");
  }

  // ---- operand and control stacks ----
  void push(T t) { vals_.push_back(t); }
  T pop() {
    if (vals_.size() == ctrls_.back().height) {
      if (ctrls_.back().unreachable) return kUnknown;
      invalid("type mismatch");
    }
    T t = vals_.back();
    vals_.pop_back();
    return t;
  }
  T pop(T expect) {
    T t = pop_keep(expect);
    return t == kUnknown ? expect : t;
  }
  // As pop(expect), but an unknown operand stays unknown (br_table re-pushes what it popped).
  T pop_keep(T expect) {
    T t = pop();
    if (!matches(c_, t, expect)) invalid("type mismatch");
    return t;
  }
  // A reference operand of any type: its type (kUnknown below an unreachable point).
  T pop_ref() {
    T t = pop();
    if (t != kUnknown && !is_ref_t(t)) invalid("type mismatch");
    return t;
  }
  void push(std::span<const T> ts) { vals_.insert(vals_.end(), ts.begin(), ts.end()); }
  void pop(std::span<const T> ts) {
    for (size_t i = ts.size(); i-- > 0;) pop(ts[i]);
  }
  void pop_types(const std::vector<VT>& ts) {
    for (size_t i = ts.size(); i-- > 0;) pop(static_cast<T>(ts[i]));
  }
  std::span<const T> start_of(const Frame& f) const { return {frame_types_.data() + f.start_at, f.start_n}; }
  std::span<const T> end_of(const Frame& f) const { return {frame_types_.data() + f.end_at, f.end_n}; }
  // Opens a frame whose start types (n_start) and then end types (n_end) are frame_types_ from `at`.
  void open(Opcode op, uint32_t at, uint32_t n_start, uint32_t n_end) {
    ctrls_.push_back({op, at, n_start, at + n_start, n_end, vals_.size(), false, set_locals_.size()});
    push(start_of(ctrls_.back()));
  }
  // Leaving a block forgets the non-defaultable locals it set (the spec's "set before get" is per
  // block: after `end` or `else` they count as unset again). Its types stay in frame_types_ until
  // the caller has used them (close).
  Frame pop_ctrl() {
    if (ctrls_.empty()) invalid("type mismatch");
    Frame f = ctrls_.back();
    pop(end_of(f));
    if (vals_.size() != f.height) invalid("type mismatch");
    for (size_t k = f.inits; k < set_locals_.size(); ++k) initialised_.erase(set_locals_[k]);
    set_locals_.resize(f.inits);
    ctrls_.pop_back();
    return f;
  }
  std::span<const T> label_types(const Frame& f) const { return f.opcode == Opcode::loop ? start_of(f) : end_of(f); }
  void unreachable() {
    vals_.resize(ctrls_.back().height);
    ctrls_.back().unreachable = true;
  }
  const Frame& label(uint32_t depth) {
    if (depth >= ctrls_.size()) invalid("unknown label");
    return ctrls_[ctrls_.size() - 1 - depth];
  }

  // ---- helpers ----
  // A block type's parameters, then its results, appended to frame_types_ for the frame it opens.
  struct BlockTypes {
    uint32_t at, params, results;
    std::span<const T> params_in(const std::vector<T>& types) const { return {types.data() + at, params}; }
  };
  BlockTypes block_type(const BlockType& b) {
    const uint32_t at = static_cast<uint32_t>(frame_types_.size());
    if (b.kind == BlockType::kEmpty) return {at, 0, 0};
    if (b.kind == BlockType::kValue) {
      frame_types_.push_back(value_type(b.value));
      return {at, 0, 1};
    }
    const FuncType& ft = func_type_at(c_, b.index);
    for (VT t : ft.params) frame_types_.push_back(static_cast<T>(t));
    for (VT t : ft.results) frame_types_.push_back(static_cast<T>(t));
    return {at, static_cast<uint32_t>(ft.params.size()), static_cast<uint32_t>(ft.results.size())};
  }
  // A value type immediate (block types, typed select), its type index checked.
  T value_type(VT t) {
    check_valtype(t, c_.m.types.size());
    return static_cast<T>(t);
  }
  // A heap type immediate (ref.null), its type index checked.
  HeapType heap_type(HeapType h) {
    if (int64_t idx = heap_type_index(h); idx >= 0) type_at(c_, static_cast<uint32_t>(idx));
    return h;
  }
  void memory_needed() {
    if (c_.memories == 0) invalid("unknown memory");
  }
  // A memory index immediate (WebAssembly 3.0: memory.size, grow, fill, copy, init name theirs).
  uint32_t memory_index(uint32_t idx) {
    if (idx >= c_.memories) invalid(fmt::format("unknown memory {}", idx));
    return idx;
  }
  // The address type of a memory or table: i64 when it is indexed by i64 (memory64, table64).
  T memory_at(uint32_t idx) const { return c_.memory64[idx] ? I64 : I32; }
  static T table_at(const TableType& t) { return t.limits.address64 ? I64 : I32; }
  // A memarg (read by the opcode reader): its memory exists, its alignment is at most the
  // natural one, and its offset is in range for the memory's index type (a 32-bit memory's
  // offset fits in 32 bits).
  uint32_t memarg(const MemArg& a, uint32_t natural_log2) {
    memory_needed();
    if (a.memory >= c_.memories) invalid(fmt::format("unknown memory {}", a.memory));
    if (a.align > natural_log2) invalid("alignment must not be larger than natural");
    if (!c_.memory64[a.memory] && a.offset > 0xFFFFFFFFull) invalid("offset out of range");
    return a.memory;
  }
  // A tag index immediate: its type index.
  uint32_t tag(uint32_t idx) {
    if (idx >= c_.tags.size()) invalid(fmt::format("unknown tag {}", idx));
    return c_.tags[idx];
  }
  const TableType& table(uint32_t idx) {
    if (idx >= c_.tables.size()) invalid(fmt::format("unknown table {}", idx));
    return c_.tables[idx];
  }
  void need_nonconst() {
    if (const_) invalid("constant expression required");
  }
  // A call's operands and results; a tail call's callee must return what this function returns
  // (each result a subtype of this function's).
  void call_type(uint32_t type_idx, bool tail) {
    const FuncType& ft = func_type_at(c_, type_idx);
    for (size_t i = ft.params.size(); i-- > 0;) pop(static_cast<T>(ft.params[i]));
    if (tail) {
      if (ft.results.size() != results_.size()) invalid("type mismatch");
      for (size_t i = 0; i < results_.size(); ++i)
        if (!matches(c_, static_cast<T>(ft.results[i]), results_[i])) invalid("type mismatch");
      unreachable();
    } else {
      for (auto t : ft.results) push(static_cast<T>(t));
    }
  }

  void instruction(const Instruction& in) {
    const Opcode op = in.opcode;
    // Constant instructions (WebAssembly 3.0; instructions.def's CONST): the consts, ref.null /
    // ref.func, global.get of an immutable global, extended-const's i32/i64 add, sub and mul, and
    // GC's allocations without segments, ref.i31 and the extern / any conversions.
    if (const_ && !in.constant()) invalid("constant expression required");
    // A malformed module that only an unread body shows (BodyReading::kDeferred; the decoder's own
    // reading rejects it first): decode_valid_module's second reading reports it as malformed.
    if ((in.flags & DATACOUNT) && !c_.m.data_count && !c_.m.data.empty()) invalid("data count section required");
    // Numeric, memory and SIMD instructions: typed by their declaration (handlers.def through ops.h).
    if (in.simple) return declared(in, *in.simple);
    // Control, reference, table, GC and bulk-memory instructions with a declared effect
    // (instructions.def); the rest ("*") by their rules below.
    if (!effect_of(*in.decl).effect.by_rule) return declared(in, *in.decl);
    if (prefix_of(op) == OpcodePrefix::kGc) return gc(in);
    if (prefix_of(op) == OpcodePrefix::kMisc) return misc(in);
    switch (op) {
      case Opcode::block: case Opcode::loop: {
        const BlockTypes bt = block_type(in.block);
        pop(bt.params_in(frame_types_));
        open(op, bt.at, bt.params, bt.results);
        return;
      }
      case Opcode::if_: {
        const BlockTypes bt = block_type(in.block);
        pop(I32);
        pop(bt.params_in(frame_types_));
        open(op, bt.at, bt.params, bt.results);
        return;
      }
      case Opcode::else_: {  // the if's frame again, its types where they are
        Frame f = pop_ctrl();
        if (f.opcode != Opcode::if_) invalid("else without if");
        open(Opcode::else_, f.start_at, f.start_n, f.end_n);
        return;
      }
      case Opcode::end: {
        Frame f = pop_ctrl();
        // An `if` without `else` has an empty else, [t1*] -> [t2*]: its parameters must match its
        // results (each a subtype of the result at its place).
        if (f.opcode == Opcode::if_) {
          const std::span<const T> params = start_of(f), results = end_of(f);
          if (params.size() != results.size()) invalid("type mismatch");
          for (size_t k = 0; k < params.size(); ++k)
            if (!matches(c_, params[k], results[k])) invalid("type mismatch");
        }
        push(end_of(f));
        frame_types_.resize(f.start_at);
        return;
      }
      case Opcode::br_table: {
        const uint32_t def = in.x;
        pop(I32);
        size_t arity = label_types(label(def)).size();
        std::vector<T> popped;
        for_each_label(in, [&](uint32_t t) {
          const auto& ts = label_types(label(t));
          if (ts.size() != arity) invalid("type mismatch");
          // Each target takes the same operands; check them without consuming.
          popped.clear();
          for (size_t i = ts.size(); i-- > 0;) popped.push_back(pop_keep(ts[i]));
          for (size_t i = popped.size(); i-- > 0;) push(popped[i]);
        });
        pop(label_types(label(def)));
        unreachable();
        return;
      }
      case Opcode::try_table: {  // try_table bt catch*: a block whose catches branch to labels outside it
        const BlockTypes bt = block_type(in.block);
        std::vector<T> values;
        for_each_catch(in, [&](const CatchImm& c) {
          values.clear();
          if (catches_a_tag(c.kind))
            for (auto p : type_at(c_, tag(c.tag)).params) values.push_back(static_cast<T>(p));
          if (pushes_exnref(c.kind)) values.push_back(static_cast<T>(ref_type(false, kHeapExn)));
          const std::span<const T> want = label_types(label(c.label));
          if (want.size() != values.size()) invalid("type mismatch");
          for (size_t k = 0; k < values.size(); ++k)
            if (!matches(c_, values[k], want[k])) invalid("type mismatch");
        });
        pop(bt.params_in(frame_types_));
        open(op, bt.at, bt.params, bt.results);
        return;
      }
      case Opcode::call_indirect: case Opcode::return_call_indirect: {
        uint32_t type_idx = in.x;
        const TableType& t = table(in.y);
        if (!matches(c_, t.element, VT::kFuncRef)) invalid("type mismatch");
        func_type_at(c_, type_idx);
        pop(table_at(t));
        call_type(type_idx, op == Opcode::return_call_indirect);
        return;
      }
      case Opcode::drop: pop(); return;
      case Opcode::select: {
        pop(I32);
        T a = pop(), b = pop();
        auto plain = [](T t) { return t == kUnknown || is_num(t) || is_vec(t); };
        if (!plain(a) || !plain(b)) invalid("type mismatch");
        if (a != b && a != kUnknown && b != kUnknown) invalid("type mismatch");
        push(a == kUnknown ? b : a);
        return;
      }
      case Opcode::select_t: {
        if (in.count != 1) invalid("invalid result arity");
        T t = value_type(in.type);
        pop(I32);
        pop(t);
        pop(t);
        push(t);
        return;
      }
      case Opcode::local_get: case Opcode::local_set: case Opcode::local_tee: {
        uint32_t i = in.x;
        T t = local_type(i);
        bool needs_set = i >= params_ && !defaultable(static_cast<VT>(t));
        if (op == Opcode::local_get) {
          if (needs_set && !initialised_.count(i)) invalid("uninitialized local");
          push(t);
          return;
        }
        pop(t);
        if (op == Opcode::local_tee) push(t);
        if (needs_set && initialised_.insert(i).second) set_locals_.push_back(i);
        return;
      }
      case Opcode::global_get: case Opcode::global_set: {
        uint32_t g = in.x;
        if (g >= c_.globals.size()) invalid("unknown global");
        // A global's initialiser sees the imported globals and the globals defined before it (Ctx
        // grows as they are validated); segment offsets see them all.
        if (const_ && c_.globals[g].mutable_) invalid("constant expression required");
        T t = static_cast<T>(c_.globals[g].type);
        if (op == Opcode::global_get) push(t);
        else {
          if (!c_.globals[g].mutable_) invalid("global is immutable");
          pop(t);
        }
        return;
      }
      case Opcode::ref_null: push(static_cast<T>(ref_type(true, heap_type(in.heap)))); return;
      case Opcode::ref_func: {
        uint32_t f = in.x;
        if (f >= c_.func_types.size()) invalid("unknown function");
        if (!const_ && !c_.refs[f]) invalid("undeclared function reference");
        push(static_cast<T>(ref_type(false, kHeapTypeIndex + c_.func_types[f])));  // (ref $t): typed function references
        return;
      }
      case Opcode::br_on_non_null: {  // br_on_non_null l: [t* (ref null ht)] -> [t*], l of type [t* (ref ht)]
        const Frame& l = label(in.x);
        std::span<const T> ts = label_types(l);
        if (ts.empty() || (!is_ref_t(ts.back()) && ts.back() != kUnknown)) invalid("type mismatch");
        T t = pop_ref();
        if (t != kUnknown && !matches(c_, static_cast<T>(ref_type(false, ref_heap(static_cast<VT>(t)))), ts.back()))
          invalid("type mismatch");
        ts = ts.first(ts.size() - 1);
        pop(ts);
        push(ts);
        return;
      }
      default: break;
    }
    // The reader knows no other opcode.
    invalid(fmt::format("illegal opcode {:#x}", opcode_value(op)));
  }

  // GC (0xFB prefix).
  T ref_of(uint32_t x, bool nullable) const { return static_cast<T>(ref_type(nullable, kHeapTypeIndex + x)); }
  const ElemSegment& elem_segment(uint32_t i) const {
    if (i >= c_.m.elements.size()) invalid("unknown elem segment");
    return c_.m.elements[i];
  }
  void data_segment(uint32_t i) const {
    size_t n = c_.m.data_count ? *c_.m.data_count : c_.m.data.size();
    if (i >= n) invalid("unknown data segment");
  }
  // The reference operand of ref.test / ref.cast / br_on_cast: in the same hierarchy as `ht`.
  T pop_in_hierarchy(HeapType ht) {
    T t = pop_ref();
    if (t != kUnknown && top_of(c_, ref_heap(static_cast<VT>(t))) != top_of(c_, ht)) invalid("type mismatch");
    return t;
  }
  void gc(const Instruction& in) {
    const Opcode op = in.opcode;
    switch (op) {
      case Opcode::struct_new: case Opcode::struct_new_default: {  // struct.new(_default) x
        uint32_t x = in.x;
        const DefType& t = struct_at(c_, x);
        if (op == Opcode::struct_new) {
          for (size_t k = t.fields.size(); k-- > 0;) pop(static_cast<T>(unpacked(t.fields[k])));
        } else {
          for (const FieldType& f : t.fields)
            if (!defaultable(f.type)) invalid("type mismatch: a field without a default");
        }
        push(ref_of(x, false));
        return;
      }
      case Opcode::array_new_default: case Opcode::array_new_fixed: case Opcode::array_new_data: case Opcode::array_new_elem: {  // array.new_default, _fixed, _data, _elem x
        uint32_t x = in.x;
        const FieldType& f = array_at(c_, x).fields.at(0);
        if (op == Opcode::array_new_default) {
          if (!defaultable(f.type)) invalid("type mismatch: an element without a default");
          pop(I32);
        } else if (op == Opcode::array_new_fixed) {
          for (uint32_t k = 0; k < in.y; ++k) pop(static_cast<T>(unpacked(f)));
        } else if (op == Opcode::array_new_data) {
          data_segment(in.y);
          if (is_ref(f.type)) invalid("type mismatch: array.new_data of references");
          pop(I32);
          pop(I32);
        } else {
          const ElemSegment& e = elem_segment(in.y);
          if (!matches(c_, e.type, f.type)) invalid("type mismatch");
          pop(I32);
          pop(I32);
        }
        push(ref_of(x, false));
        return;
      }
      case Opcode::array_copy: {  // array.copy x y: [ref x, i32, ref y, i32, i32] -> []
        uint32_t x = in.x, y = in.y;
        const FieldType& fx = array_at(c_, x).fields.at(0);
        const FieldType& fy = array_at(c_, y).fields.at(0);
        if (!fx.mutable_) invalid("array is immutable");
        if (fx.packed != fy.packed || !matches(c_, fy.type, fx.type)) invalid("type mismatch");
        pop(I32);
        pop(I32);
        pop(ref_of(y, true));
        pop(I32);
        pop(ref_of(x, true));
        return;
      }
      case Opcode::array_init_data: case Opcode::array_init_elem: {  // array.init_data x d, array.init_elem x e: [ref i32 i32 i32] -> []
        uint32_t x = in.x, seg = in.y;
        const FieldType& f = array_at(c_, x).fields.at(0);
        if (!f.mutable_) invalid("array is immutable");
        if (op == Opcode::array_init_data) {
          data_segment(seg);
          if (is_ref(f.type)) invalid("type mismatch: array.init_data of references");
        } else if (!matches(c_, elem_segment(seg).type, f.type)) {
          invalid("type mismatch");
        }
        pop(I32);
        pop(I32);
        pop(I32);
        pop(ref_of(x, true));
        return;
      }
      case Opcode::ref_test: case Opcode::ref_test_null: case Opcode::ref_cast: case Opcode::ref_cast_null: {  // ref.test, ref.cast (ref null? ht)
        HeapType h = heap_type(in.heap);
        pop_in_hierarchy(h);
        bool nullable = op == Opcode::ref_test_null || op == Opcode::ref_cast_null;
        push(op == Opcode::ref_test || op == Opcode::ref_test_null ? I32 : static_cast<T>(ref_type(nullable, h)));
        return;
      }
      case Opcode::br_on_cast: case Opcode::br_on_cast_fail: {  // br_on_cast(_fail) flags l ht1 ht2
        const uint8_t flags = in.cast_flags;
        const Frame& l = label(in.x);
        HeapType h1 = heap_type(in.heap), h2 = heap_type(in.heap2);
        T rt1 = static_cast<T>(ref_type(flags & 1, h1)), rt2 = static_cast<T>(ref_type(flags & 2, h2));
        if (!matches(c_, rt2, rt1)) invalid("type mismatch");
        // What stays when the cast fails (br_on_cast) or succeeds (br_on_cast_fail).
        T diff = static_cast<T>(ref_type((flags & 1) && !(flags & 2), h1));
        T branched = op == Opcode::br_on_cast ? rt2 : diff, stays = op == Opcode::br_on_cast ? diff : rt2;
        std::span<const T> ts = label_types(l);
        if (ts.empty() || !matches(c_, branched, ts.back())) invalid("type mismatch");
        pop(rt1);
        ts = ts.first(ts.size() - 1);
        pop(ts);
        push(ts);
        push(stays);
        return;
      }
      case Opcode::any_convert_extern: case Opcode::extern_convert_any: {  // any.convert_extern, extern.convert_any: the nullability kept
        HeapType from = op == Opcode::any_convert_extern ? kHeapExtern : kHeapAny, to = op == Opcode::any_convert_extern ? kHeapAny : kHeapExtern;
        T t = pop(static_cast<T>(ref_type(true, from)));
        push(static_cast<T>(ref_type(t == kUnknown || ref_nullable(static_cast<VT>(t)), to)));
        return;
      }
      default: invalid("illegal opcode");
    }
  }

  // The value type a declaration's signature letter stands for ('a': the address operand, of the
  // instruction's memory's address type).
  // (and, for an instructions.def row, 't' and 'e': its table's address and element types).
  static T letter_type(char c, T address, const TableType* table = nullptr) {
    if (auto t = fixed_letter_type(c)) return static_cast<T>(*t);
    switch (static_cast<ContextLetter>(c)) {
      case ContextLetter::kMemoryAddress: return address;
      case ContextLetter::kTableAddress: return table_at(*table);
      case ContextLetter::kTableElement: return static_cast<T>(table->element);
      default: break;  // 'r' popped by pop_ref; the type letters resolved by declared(InstructionDecl)
    }
    return kUnknown;  // not reached: instruction_reader.h's static_assert checks every row's letters
  }

  // An instruction with a declared effect: its immediates checked by their declared type (a
  // memarg's alignment against the natural one, a lane index against the lane count), then its
  // operands popped (last first) and its results pushed by its signature.
  void declared(const Instruction& in, const SimpleOp& s) {
    auto lane = [&](uint8_t l) {
      if (l >= s.lanes) invalid("invalid lane index");
    };
    T address = I32;
    switch (s.imm) {
      case Imm::NONE: break;
      case Imm::MEM: address = memory_at(memarg(in.mem, s.align)); break;
      case Imm::LANE: lane(in.lane); break;
      case Imm::MEMLANE: address = memory_at(memarg(in.mem, s.align)); lane(in.lane); break;
      case Imm::SHUF: for (int i = 0; i < 16; ++i) lane(in.lane_at(i)); break;
    }
    const StackEffect& e = effect_of(s);
    // The common case first: every operand there, above the frame's base, of exactly its type
    // (numeric and vector types have no subtypes, and an unknown one fails the comparison): one
    // pass over the top of the stack. Anything else takes the general rule below, which says why.
    const size_t n = e.pops.size();
    if (vals_.size() - ctrls_.back().height >= n) {
      const T* top = vals_.data() + (vals_.size() - n);
      size_t i = 0;
      while (i < n && top[i] == letter_type(e.pops[i], address)) ++i;
      if (i == n) {
        vals_.resize(vals_.size() - n);
        for (char letter : e.pushes) push(letter_type(letter, address));
        return;
      }
    }
    for (size_t i = n; i-- > 0;) pop(letter_type(e.pops[i], address));
    for (char letter : e.pushes) push(letter_type(letter, address));
  }

  // An instructions.def row with a declared effect: its index immediates checked by kind (the
  // memory, table, data or elem segment exists; a type index, the struct or array its storage
  // letters name), the storage's packing and mutability by the letters that read or write it,
  // then its operands popped (last first) and its results pushed, the context letters resolved
  // from those immediates.
  void declared(const Instruction& in, const InstructionDecl& d) {
    const DeclaredEffect& de = effect_of(d);
    const StackEffect& e = de.effect;
    if (de.plain) {  // fixed types, nothing to resolve or check (a constant, ref.eq)
      for (size_t i = e.pops.size(); i-- > 0;) pop(static_cast<T>(*fixed_letter_type(e.pops[i])));
      for (char letter : e.pushes) push(static_cast<T>(*fixed_letter_type(letter)));
      return;
    }
    T address = I32;  // the named memory's address type (static_assert: 'a' only with a MEMORY immediate)
    const TableType* tbl = nullptr;
    for (int k = 0; k < 2; ++k) {
      const uint32_t index = k ? in.y : in.x;
      switch (d.imm[k]) {
        case ImmKind::MEMORY: memory_needed(); address = memory_at(memory_index(index)); break;
        case ImmKind::TABLE: tbl = &table(index); break;
        case ImmKind::DATA: data_segment(index); break;
        case ImmKind::ELEM: elem_segment(index); break;
        case ImmKind::TYPE: type_at(c_, index); break;
        case ImmKind::FUNC:
          if (index >= c_.func_types.size()) invalid("unknown function");
          break;
        default: break;
      }
    }
    // The sequences, resolved before any operand is popped (so an unknown label, callee or tag is
    // said first): the label's types, the callee's type (a FUNC's, or the TYPE, which must be a
    // function type), the tag's. Pointers into the control stack and the module, which popping
    // and pushing operands leave alone.
    const uint64_t used = de.letters;
    auto uses = [&](ContextLetter l) { return (used & letter_bit(static_cast<char>(l))) != 0; };
    const std::span<const T> label_ts = uses(ContextLetter::kLabel) ? label_types(label(in.x)) : std::span<const T>{};
    const FuncType* callee = uses(ContextLetter::kCallArgs) || uses(ContextLetter::kCallResults)
                                 ? &func_type_at(c_, d.imm[0] == ImmKind::FUNC ? c_.func_types[in.x] : in.x)
                                 : nullptr;
    const FuncType* thrown = uses(ContextLetter::kTagParams) ? &func_type_at(c_, tag(in.x)) : nullptr;
    auto pop_sequence = [&](char letter) {
      switch (static_cast<ContextLetter>(letter)) {
        case ContextLetter::kLabel: pop(label_ts); break;
        case ContextLetter::kFunctionResults: pop(results_); break;
        case ContextLetter::kCallArgs: pop_types(callee->params); break;
        case ContextLetter::kTagParams: pop_types(thrown->params); break;
        default: break;  // stack_effect.h: the others are never popped
      }
    };
    auto push_sequence = [&](char letter) {
      if (letter == static_cast<char>(ContextLetter::kLabel)) push(label_ts);
      else for (VT t : callee->results) push(static_cast<T>(t));  // 'Z', the only other one pushed
    };
    // The storage the type letters name: struct x's field y (a FIELD immediate), else array x's element.
    const bool in_struct = d.imm[1] == ImmKind::FIELD;
    const FieldType* storage = nullptr;
    if (uses(ContextLetter::kStorage) || uses(ContextLetter::kPackedRead) || uses(ContextLetter::kStorageWrite)) {
      if (in_struct) {
        const DefType& t = struct_at(c_, in.x);
        if (in.y >= t.fields.size()) invalid("unknown field");
        storage = &t.fields[in.y];
      } else {
        storage = &array_at(c_, in.x).fields.at(0);
      }
      const bool packed = storage->packed != Packed::kNone;
      const char* access = in_struct ? "type mismatch: packed field access" : "type mismatch: packed element access";
      if (e.pushes.find(static_cast<char>(ContextLetter::kStorage)) != std::string_view::npos && packed) invalid(access);
      if (e.pushes.find(static_cast<char>(ContextLetter::kPackedRead)) != std::string_view::npos && !packed) invalid(access);
      if (e.pops.find(static_cast<char>(ContextLetter::kStorageWrite)) != std::string_view::npos && !storage->mutable_)
        invalid(in_struct ? "field is immutable" : "array is immutable");
    }
    T popped_ref = kUnknown;  // what 'r' popped, for 'R'
    auto type = [&](char letter) -> T {
      switch (static_cast<ContextLetter>(letter)) {
        case ContextLetter::kTypeRef: return ref_of(in.x, true);
        case ContextLetter::kTypeRefNonNull: return ref_of(in.x, false);
        case ContextLetter::kStorage: case ContextLetter::kStorageWrite: return static_cast<T>(unpacked(*storage));
        case ContextLetter::kPackedRead: return I32;
        case ContextLetter::kNonNullRef:
          return popped_ref == kUnknown ? kUnknown : static_cast<T>(ref_type(false, ref_heap(static_cast<VT>(popped_ref))));
        default: return letter_type(letter, address, tbl);
      }
    };
    for (size_t i = e.pops.size(); i-- > 0;) {
      if (e.pops[i] == static_cast<char>(ContextLetter::kAnyRef)) popped_ref = pop_ref();
      else if (is_sequence_letter(e.pops[i])) pop_sequence(e.pops[i]);
      else pop(type(e.pops[i]));
    }
    // A tail call's callee must return what this function returns (each result a subtype of this
    // function's).
    if (d.flags & TAIL) {
      if (callee->results.size() != results_.size()) invalid("type mismatch");
      for (size_t i = 0; i < results_.size(); ++i)
        if (!matches(c_, static_cast<T>(callee->results[i]), results_[i])) invalid("type mismatch");
    }
    for (char letter : e.pushes) {
      if (is_sequence_letter(letter)) push_sequence(letter);
      else push(type(letter));
    }
    if (d.flags & STOPS) unreachable();
  }

  void misc(const Instruction& in) {
    const Opcode op = in.opcode;
    switch (op) {
      // memory.copy d s n: d and s of their memories' address types, n of the narrower one.
      case Opcode::memory_copy: {
        memory_needed();
        T d = memory_at(memory_index(in.x)), s = memory_at(memory_index(in.y));
        pop(d == I64 && s == I64 ? I64 : I32);
        pop(s);
        pop(d);
        return;
      }
      case Opcode::table_init: {
        const ElemSegment& e = elem_segment(in.x);
        const TableType& t = table(in.y);
        if (!matches(c_, e.type, t.element)) invalid("type mismatch");
        pop(I32); pop(I32); pop(table_at(t));
        return;
      }
      case Opcode::table_copy: {
        const TableType& dst = table(in.x);
        const TableType& src = table(in.y);
        if (!matches(c_, src.element, dst.element)) invalid("type mismatch");
        pop(table_at(dst) == I64 && table_at(src) == I64 ? I64 : I32);
        pop(table_at(src));
        pop(table_at(dst));
        return;
      }
      default: invalid("illegal opcode");
    }
  }

  T local_type(uint32_t i) const {
    if (i < local_types_.size()) return local_types_[i];
    for (const auto& [end, t] : local_runs_)
      if (i < end) return t;
    invalid("unknown local");
  }

  const Ctx& c_;
  static constexpr size_t kFlatLocals = 4096;
  std::vector<std::pair<uint64_t, T>> local_runs_;
  std::vector<T> local_types_;  // the first kFlatLocals locals' types, by index
  std::vector<T> results_, vals_;
  std::vector<Frame> ctrls_;
  std::vector<T> frame_types_;  // every open frame's start and end types (Frame)
  uint64_t params_ = 0;
  // Non-defaultable locals (typed function references) set so far, and the order they were set
  // in, so that leaving a block can forget those it set.
  std::set<uint32_t> initialised_;
  std::vector<uint32_t> set_locals_;
  bool const_ = false;
};

BodyValidator::BodyValidator(const Ctx& c) : v_(std::make_unique<FunctionValidator>(c)) {}
BodyValidator::~BodyValidator() = default;
void BodyValidator::function(const FuncType& ft, const std::vector<std::pair<uint32_t, ValType>>& locals, const Expr& body) {
  v_->function(ft, locals, body);
}
void BodyValidator::const_expr(const Expr& e, ValType t) { v_->constant(e, t); }

}  // namespace dlab::wasm::validate_impl
