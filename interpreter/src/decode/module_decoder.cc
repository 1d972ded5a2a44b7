// Decoding a module: sections in order, each parsed to its end, and every expression walked
// instruction by instruction (so an unknown opcode or a missing `end` is caught here), except the
// function bodies under BodyReading::kDeferred, which the validator reads (decode_valid.cc).
#include <algorithm>

#include <fmt/format.h>

#include "decode/binary_codes.h"
#include "decode/binary_reader.h"
#include "decode/instruction_reader.h"

namespace dlab::wasm {

namespace {

// A heap type (s33): an abstract one as a negative code, a type index as a non-negative one.
HeapType decode_heaptype(BinaryReader& r) {
  int64_t h = r.s33();
  if (h >= 0) {
    if (h >= kHeapCanonical - kHeapTypeIndex) r.fail("type index too large");
    return kHeapTypeIndex + static_cast<HeapType>(h);
  }
  uint8_t b = static_cast<uint8_t>(h & 0x7F);
  if (!is_abstract_heap(b) || h < -64) r.fail("malformed heap type");
  return b;
}

// A reference type after its first byte: the shorthands funcref / externref, or 0x63 / 0x64
// (ref null ht / ref ht).
ValType reftype_after(BinaryReader& r, uint8_t b) {
  switch (b) {
    case code_byte(TypeCode::kRefNull): return ref_type(true, decode_heaptype(r));
    case code_byte(TypeCode::kRef): return ref_type(false, decode_heaptype(r));
    default:
      if (b == static_cast<uint8_t>(ValType::kFuncRef)) return ValType::kFuncRef;
      if (b == static_cast<uint8_t>(ValType::kExternRef)) return ValType::kExternRef;
      if (is_abstract_heap(b)) return ref_type(true, b);  // the shorthands: anyref, nullfuncref, exnref, ...
      r.fail("malformed reference type");
  }
}

ValType decode_valtype(BinaryReader& r) {
  uint8_t b = r.u8();
  if (is_numtype_or_vec(b)) return static_cast<ValType>(b);
  if (b == code_byte(TypeCode::kRefNull) || b == code_byte(TypeCode::kRef) || is_abstract_heap(b)) return reftype_after(r, b);
  r.fail("malformed value type");
}

ValType valtype(BinaryReader& r) { return decode_valtype(r); }

ValType reftype(BinaryReader& r) {
  uint8_t b = r.u8();
  if (is_numtype_or_vec(b)) r.fail("malformed reference type");
  return reftype_after(r, b);
}

Limits limits(BinaryReader& r) {
  // Flags: bit 0 a maximum follows, bit 2 the index type is i64 (memory64). Bit 1 (shared, the
  // threads proposal) is not in WebAssembly 3.0.
  uint8_t flag = r.u8();
  if (flag & ~0x05) r.fail("integer too large");  // the spec's word for an out-of-range flag
  Limits l;
  l.address64 = flag & 0x04;
  l.min = r.u64();
  if (flag & 0x01) l.max = r.u64();
  return l;
}

// A storage type: a value type or a packed i8 (0x78) / i16 (0x77), then its mutability.
FieldType fieldtype(BinaryReader& r) {
  FieldType f;
  uint8_t b = r.peek();
  if (b == code_byte(TypeCode::kI8) || b == code_byte(TypeCode::kI16)) {
    r.u8();
    f.packed = b == code_byte(TypeCode::kI8) ? Packed::kI8 : Packed::kI16;
  } else {
    f.type = valtype(r);
  }
  uint8_t m = r.u8();
  if (m > 1) r.fail("malformed mutability");
  f.mutable_ = m == 1;
  return f;
}

// A subtype: `sub final? vec(typeidx) comptype` (0x4F final, 0x50 open) or a bare composite type
// (final, no supertype); a composite type is func 0x60, struct 0x5F or array 0x5E.
DefType subtype(BinaryReader& r) {
  DefType t;
  uint8_t form = r.u8();
  if (form == code_byte(TypeCode::kSub) || form == code_byte(TypeCode::kSubFinal)) {
    t.final = form == code_byte(TypeCode::kSubFinal);
    uint32_t n = r.u32();
    if (n > 1) r.fail("malformed definition type");  // at most one supertype in 3.0
    if (n == 1) t.super = r.u32();
    form = r.u8();
  }
  switch (form) {
    case code_byte(TypeCode::kFunc):
      t.kind = TypeKind::kFunc;
      for (uint32_t k = r.u32(), j = 0; j < k; ++j) t.params.push_back(valtype(r));
      for (uint32_t k = r.u32(), j = 0; j < k; ++j) t.results.push_back(valtype(r));
      break;
    case code_byte(TypeCode::kStruct):
      t.kind = TypeKind::kStruct;
      for (uint32_t k = r.u32(), j = 0; j < k; ++j) t.fields.push_back(fieldtype(r));
      break;
    case code_byte(TypeCode::kArray):
      t.kind = TypeKind::kArray;
      t.fields.push_back(fieldtype(r));
      break;
    default: r.fail("integer representation too long");  // the spec's message for a bad form byte
  }
  return t;
}

GlobalType globaltype(BinaryReader& r) {
  GlobalType g;
  g.type = valtype(r);
  uint8_t m = r.u8();
  if (m > 1) r.fail("malformed mutability");
  g.mutable_ = m == 1;
  return g;
}

struct ExprScan {
  bool uses_data_count = false;  // memory.init, data.drop, array.new_data, array.init_data
};

// Walks one expression through its final `end`, every instruction read (and so checked) by the
// opcode reader; the blocks it opens tell which `end` is the last.
void scan_expr(BinaryReader& r, ExprScan& scan) {
  int depth = 0;
  for (;;) {
    if (r.at_end()) r.fail("END opcode expected");
    Instruction in = read_instruction(r);
    if (in.flags & DATACOUNT) scan.uses_data_count = true;
    if (in.flags & OPENS) ++depth;
    else if (in.flags & END) {
      if (depth == 0) return;
      --depth;
    }
  }
}

Expr expr(BinaryReader& r, ExprScan& scan) {
  const uint8_t* b = r.position();
  scan_expr(r, scan);
  return Expr{{b, r.position()}};
}

std::vector<uint8_t> ref_func_expr(uint32_t idx) {
  std::vector<uint8_t> e = {0xD2};
  do {
    uint8_t b = idx & 0x7F;
    idx >>= 7;
    e.push_back(idx ? (b | 0x80) : b);
  } while (idx);
  e.push_back(0x0B);
  return e;
}

// Section ids in the order the binary format requires them (datacount sits between elem and code,
// the tag section between memory and global).
int section_rank(uint8_t id) {
  static const int rank[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 12, 13, 11, 6};
  return id <= kLastSectionId ? rank[id] : -1;
}
// A tag: attribute 0 (an exception) and its type index.
uint32_t tagtype(BinaryReader& r) {
  if (r.u8() != 0x00) r.fail("malformed tag attribute");
  return r.u32();
}

}  // namespace

Module decode_module(const uint8_t* data, size_t size, BodyReading bodies) {
  BinaryReader r(data, size);
  Module m;
  static const uint8_t kMagic[4] = {0x00, 0x61, 0x73, 0x6D};
  if (size < 4) r.fail("unexpected end");
  for (int i = 0; i < 4; ++i)
    if (data[i] != kMagic[i]) r.fail("magic header not detected");
  r.bytes(4);
  if (size < 8) r.fail("unexpected end");
  const uint8_t* v = r.bytes(4);
  if (v[0] != 1 || v[1] != 0 || v[2] != 0 || v[3] != 0) r.fail("unknown binary version");

  ExprScan scan;
  int last_rank = 0;
  bool saw_function = false, saw_code = false;
  while (!r.at_end()) {
    uint8_t id = r.u8();
    if (id > kLastSectionId) r.fail("malformed section id");
    uint32_t size_bytes = r.u32();
    BinaryReader s = r.sub(size_bytes);
    if (id != static_cast<uint8_t>(SectionId::kCustom)) {
      if (section_rank(id) <= last_rank) r.fail("unexpected content after last section");
      last_rank = section_rank(id);
    }
    auto count = [&] { return s.u32(); };
    switch (static_cast<SectionId>(id)) {
      case SectionId::kCustom:
        m.custom_sections.push_back(s.name());
        s.bytes(s.remaining());
        break;
      case SectionId::kType:
        for (uint32_t n = count(), i = 0; i < n; ++i) {
          // A recursive group (0x4E vec(subtype)) or one subtype alone in its group.
          uint32_t begin = static_cast<uint32_t>(m.types.size()), size = 1;
          bool group = s.peek() == code_byte(TypeCode::kRec);
          if (group) {
            s.u8();
            size = s.u32();
          }
          for (uint32_t k = 0; k < size; ++k) {
            DefType t = subtype(s);
            t.rec_begin = begin;
            t.rec_size = size;
            m.types.push_back(std::move(t));
          }
        }
        break;
      case SectionId::kImport:
        for (uint32_t n = count(), i = 0; i < n; ++i) {
          Import im;
          im.module = s.name();
          im.name = s.name();
          uint8_t kind = s.u8();
          if (kind > static_cast<uint8_t>(ExternKind::kTag)) s.fail("malformed import kind");
          im.kind = static_cast<ExternKind>(kind);
          switch (im.kind) {
            case ExternKind::kFunc: im.func_type = s.u32(); break;
            case ExternKind::kTag: im.func_type = tagtype(s); break;
            case ExternKind::kTable: im.table = {reftype(s), limits(s)}; break;
            case ExternKind::kMemory: im.memory = limits(s); break;
            case ExternKind::kGlobal: im.global = globaltype(s); break;
          }
          m.imports.push_back(std::move(im));
        }
        break;
      case SectionId::kFunction:
        saw_function = true;
        for (uint32_t n = count(), i = 0; i < n; ++i) m.functions.push_back(s.u32());
        break;
      case SectionId::kTable:
        for (uint32_t n = count(), i = 0; i < n; ++i) {
          // 0x40 0x00: a table with an initializer expression (typed function references).
          Table t;
          bool with_init = s.peek() == code_byte(TypeCode::kEmpty);
          if (with_init) {
            s.u8();
            if (s.u8() != 0x00) s.fail("malformed table");
          }
          t.element = reftype(s);
          t.limits = limits(s);
          if (with_init) t.init = expr(s, scan);
          m.tables.push_back(std::move(t));
        }
        break;
      case SectionId::kMemory:
        for (uint32_t n = count(), i = 0; i < n; ++i) m.memories.push_back(limits(s));
        break;
      case SectionId::kTag:
        for (uint32_t n = count(), i = 0; i < n; ++i) m.tags.push_back(tagtype(s));
        break;
      case SectionId::kGlobal:
        for (uint32_t n = count(), i = 0; i < n; ++i) {
          Global g;
          g.type = globaltype(s);
          g.init = expr(s, scan);
          m.globals.push_back(std::move(g));
        }
        break;
      case SectionId::kExport:
        for (uint32_t n = count(), i = 0; i < n; ++i) {
          Export e;
          e.name = s.name();
          uint8_t kind = s.u8();
          if (kind > 4) s.fail("malformed export kind");
          e.kind = static_cast<ExternKind>(kind);
          e.index = s.u32();
          m.exports.push_back(std::move(e));
        }
        break;
      case SectionId::kStart:
        m.start = s.u32();
        break;
      case SectionId::kElement:
        for (uint32_t n = count(), i = 0; i < n; ++i) {
          ElemSegment e;
          uint32_t flags = s.u32();
          if (flags > 7) s.fail("malformed elements segment kind");
          bool passive_or_declarative = flags & 1, explicit_table = flags & 2, exprs = flags & 4;
          if (passive_or_declarative) e.mode = explicit_table ? ElemSegment::kDeclarative : ElemSegment::kPassive;
          else {
            if (explicit_table) e.table = s.u32();
            e.offset = expr(s, scan);
          }
          // Function indices (no expressions) are of type (ref func) in 3.0, expressions funcref
          // unless the segment says otherwise.
          e.type = exprs ? ValType::kFuncRef : ref_type(false, kHeapFunc);
          if (passive_or_declarative || explicit_table) {
            if (exprs) e.type = reftype(s);
            else if (s.u8() != 0x00) s.fail("malformed element kind");
          }
          for (uint32_t k = count(), j = 0; j < k; ++j) e.init.push_back(exprs ? expr(s, scan) : Expr{ref_func_expr(s.u32())});
          m.elements.push_back(std::move(e));
        }
        break;
      case SectionId::kDataCount:
        m.data_count = s.u32();
        break;
      case SectionId::kCode: {
        saw_code = true;
        uint32_t n = count();
        if (n != m.functions.size()) s.fail("function and code section have inconsistent lengths");
        m.code.reserve(std::min<size_t>(n, s.remaining() / 2));  // a body takes two bytes at least
        for (uint32_t i = 0; i < n; ++i) {
          BinaryReader body = s.sub(s.u32());
          FunctionBody f;
          uint64_t total = 0;
          for (uint32_t k = body.u32(), j = 0; j < k; ++j) {
            uint32_t c = body.u32();
            total += c;
            if (total > 0xFFFFFFFFull) body.fail("too many locals");
            f.locals.emplace_back(c, valtype(body));
          }
          if (bodies == BodyReading::kDeferred) {
            f.code = Expr{{body.position(), body.position() + body.remaining()}};
          } else {
            f.code = expr(body, scan);
            if (!body.at_end()) body.fail("section size mismatch");
          }
          m.code.push_back(std::move(f));
        }
        break;
      }
      case SectionId::kData: {
        uint32_t n = count();
        if (m.data_count && *m.data_count != n) s.fail("data count and data section have inconsistent lengths");
        // Grown once (a Go module has 100,000 segments), but never past what the section's bytes
        // can hold, a segment taking two at least: a count is the module's word, not a fact.
        m.data.reserve(std::min<size_t>(n, s.remaining() / 2));
        for (uint32_t i = 0; i < n; ++i) {
          DataSegment d;
          uint32_t flags = s.u32();
          if (flags > 2) s.fail("malformed data segment kind");
          if (flags == 1) d.mode = DataSegment::kPassive;
          else {
            if (flags == 2) d.memory = s.u32();
            d.offset = expr(s, scan);
          }
          uint32_t len = s.u32();
          const uint8_t* b = s.bytes(len);
          d.bytes.assign(b, b + len);
          m.data.push_back(std::move(d));
        }
        break;
      }
    }
    if (!s.at_end()) s.fail("section size mismatch");
  }
  if (saw_function != saw_code && !m.functions.empty()) r.fail("function and code section have inconsistent lengths");
  if (m.data_count && *m.data_count != m.data.size()) r.fail("data count and data section have inconsistent lengths");
  // Data indices in code need the data count section, so that a one-pass decoder can check them;
  // without data segments there is nothing to count and validation reports the unknown index.
  if (scan.uses_data_count && !m.data_count && !m.data.empty()) r.fail("data count section required");
  return m;
}

ValType read_valtype(BinaryReader& r) { return decode_valtype(r); }
HeapType read_heaptype(BinaryReader& r) { return decode_heaptype(r); }

Module decode_module(const uint8_t* data, size_t size) { return decode_module(data, size, BodyReading::kRead); }
Module decode_module(const std::vector<uint8_t>& bytes) { return decode_module(bytes.data(), bytes.size()); }

}  // namespace dlab::wasm
