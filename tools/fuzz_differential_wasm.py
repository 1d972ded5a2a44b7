"""The WebAssembly side of tools/fuzz_differential.py: read what it needs of a module made by
`wasm-opt -ttf` (types, imports, tables, globals, exports), and write the two modules that stand
in for binaryen's fuzzing host in dlab's spec runner, and the .bin.wast script that runs them.

binaryen's interpreter (`wasm-opt --fuzz-exec-before`) gives a -ttf module a host, "fuzzing-support"
(src/tools/execution-results.h in binaryen): log-i32/i64/f32/f64/v128/anyref/funcref/externref
print their argument; throw(0) throws a JavaScript error (the imported tag "jstag", payload the
extern "jserror"), throw(n) the imported tag "wasmtag" with n; sleep(ms, id) returns id;
call-export(i, flags) and call-export-catch(i) call the module's i-th export as JavaScript would
(zero arguments; an i64, v128 or non-nullable parameter, a v128 or exnref result, an index past the
exports or an export that is not a function throw a JavaScript error instead; the -catch form
returns 1 when an exception, never a trap, came out, else 0); call-ref(f, flags) and
call-ref-catch(f) the same for a function reference (null throws); table-get(i) / table-set(i, f)
read and write the table exported as "table" (an index past its end throws). Imported immutable
externref globals of "__fuzz_import" are host references numbered by their names.

Here that host is WebAssembly, so every engine configuration of dlab runs it:

  support (registered as "fuzzing-support" and "__fuzz_import"): every import of the module, with
      the module's own type indices (its type section is copied, so every type matches); each log
      call appends (kind, bits, bits) to a list in its memory, read back by the script through
      __log_count and __log_entry; host references are externalised structs of a private type
      carrying their number (jserror's is 0xbad, as binaryen's).
  linker (instantiated after the module): imports the module's exports and its "table", and puts
      one adapter per export, one for call-ref (a cast to each function type, subtypes first) and
      two for the table into the support module's hook table, which call-export & co. call
      through.

What the emulation cannot do: a host reference internalised (any.convert_extern) is a struct here,
so `ref.test eq` / `ref.test struct` on one says 1 where binaryen says 0 (binaryen 132's -ttf was
not seen to emit any.convert_extern on them; docs/interpreter/fuzzing.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field

# ---------------------------------------------------------------------------------------------
# Reading a module.

NUM_TYPES = {0x7F: "i32", 0x7E: "i64", 0x7D: "f32", 0x7C: "f64", 0x7B: "v128"}
ABSTRACT_HEAP = {0x70: "func", 0x6F: "extern", 0x6E: "any", 0x6D: "eq", 0x6C: "i31", 0x6B: "struct",
                 0x6A: "array", 0x69: "exn", 0x71: "none", 0x72: "noextern", 0x73: "nofunc", 0x74: "noexn"}
HEAP_TOP = {"func": "func", "nofunc": "func", "extern": "extern", "noextern": "extern", "exn": "exn",
            "noexn": "exn", "any": "any", "eq": "any", "i31": "any", "struct": "any", "array": "any",
            "none": "any"}


class WasmFormatError(ValueError):
    """A module this reader does not understand (it reads what binaryen 132's -ttf writes)."""


@dataclass(frozen=True)
class ValType:
    kind: str                 # i32 i64 f32 f64 v128 ref
    raw: bytes                # its encoding, copied as it is into the modules written here
    nullable: bool = False
    heap: str | int = ""      # an abstract heap type's name or a type index

    def heap_bytes(self) -> bytes:
        """The heap type's encoding (for ref.null)."""
        return self.raw[1:] if self.raw[0] in (0x63, 0x64) else self.raw


@dataclass
class SubType:
    kind: str                 # func struct array
    params: list[ValType] = field(default_factory=list)
    results: list[ValType] = field(default_factory=list)
    supers: list[int] = field(default_factory=list)


@dataclass
class Import:
    module: str
    name: str
    kind: int                 # 0 func, 1 table, 2 memory, 3 global, 4 tag
    type_index: int = -1      # func and tag
    valtype: ValType | None = None  # global
    mutable: bool = False


@dataclass
class Table:
    elem: ValType
    table64: bool


@dataclass
class Export:
    name: str
    kind: int
    index: int


@dataclass
class Module:
    type_groups: int = 0      # rec groups in the type section
    type_bytes: bytes = b""   # the type section's groups, without their count
    types: list[SubType] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    func_types: list[int] = field(default_factory=list)   # every function's type index, imports first
    tables: list[Table] = field(default_factory=list)     # imports first
    globals: list[ValType] = field(default_factory=list)  # imports first
    exports: list[Export] = field(default_factory=list)
    has_start: bool = False

    def func_type(self, func_index: int) -> SubType:
        return self.types[self.func_types[func_index]]


class Reader:
    def __init__(self, data: bytes, pos: int = 0, end: int | None = None):
        self.data, self.pos, self.end = data, pos, len(data) if end is None else end

    def byte(self) -> int:
        if self.pos >= self.end:
            raise WasmFormatError(f"unexpected end at byte {self.pos}")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def peek(self) -> int:
        if self.pos >= self.end:
            raise WasmFormatError(f"unexpected end at byte {self.pos}")
        return self.data[self.pos]

    def uleb(self) -> int:
        result = shift = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return result
            if shift > 70:
                raise WasmFormatError(f"LEB128 too long at byte {self.pos}")

    def sleb(self) -> int:
        result = shift = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                if b & 0x40:
                    result -= 1 << shift
                return result
            if shift > 70:
                raise WasmFormatError(f"LEB128 too long at byte {self.pos}")

    def take(self, n: int) -> bytes:
        if self.pos + n > self.end:
            raise WasmFormatError(f"unexpected end at byte {self.pos}")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def name(self) -> str:
        return self.take(self.uleb()).decode("utf-8", errors="replace")

    def heap_type(self) -> str | int:
        b = self.peek()
        if b in ABSTRACT_HEAP:
            self.pos += 1
            return ABSTRACT_HEAP[b]
        index = self.sleb()
        if index < 0:
            raise WasmFormatError(f"heap type {b:#x} at byte {self.pos} (a proposal dlab does not support)")
        return index

    def valtype(self) -> ValType:
        start = self.pos
        b = self.byte()
        if b in NUM_TYPES:
            return ValType(NUM_TYPES[b], bytes([b]))
        if b in ABSTRACT_HEAP:
            return ValType("ref", bytes([b]), True, ABSTRACT_HEAP[b])
        if b in (0x63, 0x64):
            heap = self.heap_type()
            return ValType("ref", self.data[start:self.pos], b == 0x63, heap)
        raise WasmFormatError(f"value type {b:#x} at byte {start}")

    def limits(self) -> bool:
        """Skips limits; whether they are 64-bit."""
        flags = self.byte()
        if flags not in (0, 1, 4, 5):
            raise WasmFormatError(f"limits flags {flags:#x} (shared or unknown) at byte {self.pos - 1}")
        self.uleb()
        if flags & 1:
            self.uleb()
        return bool(flags & 4)

    def const_expr(self) -> None:
        """Skips a constant expression (the instructions a -ttf module puts in one)."""
        while True:
            op = self.byte()
            if op == 0x0B:
                return
            if op in (0x41, 0x42):
                self.sleb()
            elif op == 0x43:
                self.take(4)
            elif op == 0x44:
                self.take(8)
            elif op in (0x23, 0xD2):
                self.uleb()
            elif op == 0xD0:
                self.heap_type()
            elif op in (0x6A, 0x6B, 0x6C, 0x7C, 0x7D, 0x7E):
                pass
            elif op == 0xFD:
                sub = self.uleb()
                if sub != 12:
                    raise WasmFormatError(f"SIMD opcode {sub} in a constant expression")
                self.take(16)
            elif op == 0xFB:
                sub = self.uleb()
                if sub in (0, 1, 6, 7):
                    self.uleb()
                elif sub == 8:
                    self.uleb()
                    self.uleb()
                elif sub in (0x1A, 0x1B, 0x1C):
                    pass
                else:
                    raise WasmFormatError(f"GC opcode {sub} in a constant expression")
            else:
                raise WasmFormatError(f"opcode {op:#x} in a constant expression at byte {self.pos - 1}")


def _comp_type(r: Reader) -> SubType:
    form = r.byte()
    if form == 0x60:
        params = [r.valtype() for _ in range(r.uleb())]
        results = [r.valtype() for _ in range(r.uleb())]
        return SubType("func", params, results)
    if form in (0x5F, 0x5E):
        for _ in range(r.uleb() if form == 0x5F else 1):
            if r.peek() in (0x78, 0x77):
                r.byte()
            else:
                r.valtype()
            r.byte()
        return SubType("struct" if form == 0x5F else "array")
    raise WasmFormatError(f"composite type {form:#x} at byte {r.pos - 1}")


def _sub_type(r: Reader) -> SubType:
    supers: list[int] = []
    if r.peek() in (0x50, 0x4F):
        r.byte()
        supers = [r.uleb() for _ in range(r.uleb())]
    t = _comp_type(r)
    t.supers = supers
    return t


def read_module(data: bytes) -> Module:
    if data[:8] != b"\0asm\1\0\0\0":
        raise WasmFormatError("not a WebAssembly binary module (version 1)")
    m = Module()
    r = Reader(data, 8)
    while r.pos < len(data):
        sid = r.byte()
        size = r.uleb()
        s = Reader(data, r.pos, r.pos + size)
        r.pos += size
        if sid == 1:
            m.type_groups = s.uleb()
            start = s.pos
            for _ in range(m.type_groups):
                if s.peek() == 0x4E:
                    s.byte()
                    m.types.extend(_sub_type(s) for _ in range(s.uleb()))
                else:
                    m.types.append(_sub_type(s))
            m.type_bytes = data[start:s.pos]
        elif sid == 2:
            for _ in range(s.uleb()):
                im = Import(s.name(), s.name(), s.byte())
                if im.kind == 0:
                    im.type_index = s.uleb()
                    m.func_types.append(im.type_index)
                elif im.kind == 1:
                    elem = s.valtype()
                    m.tables.append(Table(elem, s.limits()))
                elif im.kind == 2:
                    s.limits()
                elif im.kind == 3:
                    im.valtype = s.valtype()
                    im.mutable = s.byte() == 1
                    m.globals.append(im.valtype)
                elif im.kind == 4:
                    s.byte()
                    im.type_index = s.uleb()
                else:
                    raise WasmFormatError(f"import kind {im.kind}")
                m.imports.append(im)
        elif sid == 3:
            m.func_types.extend(s.uleb() for _ in range(s.uleb()))
        elif sid == 4:
            for _ in range(s.uleb()):
                with_init = s.peek() == 0x40
                if with_init:
                    s.byte()
                    s.byte()
                elem = s.valtype()
                m.tables.append(Table(elem, s.limits()))
                if with_init:
                    s.const_expr()
        elif sid == 6:
            for _ in range(s.uleb()):
                m.globals.append(s.valtype())
                s.byte()
                s.const_expr()
        elif sid == 7:
            m.exports = [Export(s.name(), s.byte(), s.uleb()) for _ in range(s.uleb())]
        elif sid == 8:
            m.has_start = True
    return m


def keep_exports(data: bytes, keep: set[str]) -> bytes:
    """The module with only the exports named in `keep` (the rest of it byte for byte): a step of
    the reduction of a finding."""
    if data[:8] != b"\0asm\1\0\0\0":
        raise WasmFormatError("not a WebAssembly binary module (version 1)")
    out = bytearray(data[:8])
    r = Reader(data, 8)
    while r.pos < len(data):
        start = r.pos
        sid = r.byte()
        size = r.uleb()
        body_start = r.pos
        r.pos += size
        if sid != 7:
            out += data[start:r.pos]
            continue
        s = Reader(data, body_start, r.pos)
        kept = []
        for _ in range(s.uleb()):
            at = s.pos
            name = s.name()
            s.byte()
            s.uleb()
            if name in keep:
                kept.append(data[at:s.pos])
        out += section(7, vec(kept))
    return bytes(out)


# ---------------------------------------------------------------------------------------------
# Writing modules.

def uleb(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def sleb(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if (n == 0 and not b & 0x40) or (n == -1 and b & 0x40):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def name_bytes(s: str) -> bytes:
    raw = s.encode()
    return uleb(len(raw)) + raw


def vec(items: list[bytes]) -> bytes:
    return uleb(len(items)) + b"".join(items)


def section(sid: int, payload: bytes) -> bytes:
    return bytes([sid]) + uleb(len(payload)) + payload


I32, I64, F32, F64, V128 = 0x7F, 0x7E, 0x7D, 0x7C, 0x7B
FUNCREF, EXTERNREF = 0x70, 0x6F
END = b"\x0b"


def functype(params: list[int], results: list[int]) -> bytes:
    return b"\x60" + vec([bytes([p]) for p in params]) + vec([bytes([r]) for r in results])


def i32_const(n: int) -> bytes:
    return b"\x41" + sleb(n)


def call(f: int) -> bytes:
    return b"\x10" + uleb(f)


def local_get(i: int) -> bytes:
    return b"\x20" + uleb(i)


def throw(tag: int) -> bytes:
    return b"\x08" + uleb(tag)


def gc(op: int, *imm: int) -> bytes:
    return b"\xfb" + uleb(op) + b"".join(uleb(i) for i in imm)


def code_entry(locals_: list[tuple[int, int]], body: bytes) -> bytes:
    entry = vec([uleb(n) + bytes([t]) for n, t in locals_]) + body + END
    return uleb(len(entry)) + entry


def default_value(t: ValType) -> bytes:
    """The instruction that pushes t's zero (binaryen's Literal::makeZero), for a defaultable t."""
    if t.kind == "i32":
        return i32_const(0)
    if t.kind == "i64":
        return b"\x42\x00"
    if t.kind == "f32":
        return b"\x43" + bytes(4)
    if t.kind == "f64":
        return b"\x44" + bytes(8)
    if t.kind == "v128":
        return b"\xfd\x0c" + bytes(16)
    return b"\xd0" + t.heap_bytes()


def heap_top(m: Module, heap: str | int) -> str:
    if isinstance(heap, str):
        return HEAP_TOP[heap]
    return "func" if m.types[heap].kind == "func" else "any"


def js_callable(m: Module, t: SubType) -> bool:
    """Whether binaryen's host calls a function of this type as JavaScript would (else it throws a
    JavaScript error before the call): no i64, v128, exnref or non-nullable parameter, no v128 or
    exnref result."""
    for p in t.params:
        if p.kind in ("i64", "v128"):
            return False
        if p.kind == "ref" and (not p.nullable or heap_top(m, p.heap) == "exn"):
            return False
    for res in t.results:
        if res.kind == "v128" or (res.kind == "ref" and heap_top(m, res.heap) == "exn"):
            return False
    return True


def defaultable(t: ValType) -> bool:
    return t.kind != "ref" or t.nullable


def extern_payload(module: str, name: str) -> int:
    """binaryen's number for an imported externref global: its names' bytes summed modulo 251."""
    payload = 0
    for part in (module, name):
        for c in part.encode():
            payload = (payload + (c if c < 128 else c - 256)) % 251
    return payload


JSERROR = 0xBAD
LOG_CAPACITY = 100_000  # entries kept (the count goes on past it)
ENTRY_BYTES = 24

# What each log import records: kind of entry (also in fuzz_differential.py's comparisons).
LOG_I32, LOG_I64, LOG_F32, LOG_F64, LOG_V128 = 1, 2, 3, 4, 5
LOG_NULL, LOG_I31, LOG_HOST, LOG_OBJECT, LOG_FUNCTION = 6, 7, 8, 9, 10

SUPPORT_TAGS = {"wasmtag", "jstag"}
SUPPORT_NAMES = ("fuzzing-support", "__fuzz_import")
MAIN_NAME = "__main"  # the name the module is registered under, for the linker
START = "(start)"     # the export name of the log read back after instantiation


class Unsupported(Exception):
    """A module the harness cannot host (an import binaryen's host does not have either)."""



def heap(h: str | int) -> bytes:
    """A heap type's encoding: an abstract type's byte or a type index as s33."""
    if isinstance(h, str):
        return bytes([{v: k for k, v in ABSTRACT_HEAP.items()}[h]])
    return sleb(h)


class Types:
    """The module's type section with this harness's own types appended, so a hook's type, the
    marker struct and every type of the module have the same index in the support and the linker
    module (and a function of the module's type is that type in all three)."""
    FUNCS = {
        "void": ([], []),
        "tget": ([I32], [FUNCREF]),
        "tset": ([I32, FUNCREF], []),
        "callref": ([FUNCREF], []),
        "i32": ([I32], []),
        "ext": ([EXTERNREF], []),
        "count": ([], [I32]),
        "entry": ([I32], [I32, I64, I64]),
        "record": ([I32, I64, I64], []),
        "logref": ([0x6E], []),
    }

    def __init__(self, m: Module):
        base = len(m.types)
        self.index = {n: base + i for i, n in enumerate(self.FUNCS)}
        # The host reference's struct, final, in a recursion group with a second type of an odd
        # shape, so that no type of a -ttf module is the same type.
        self.index["marker"] = base + len(self.FUNCS)
        marker = (b"\x4e\x02" + b"\x4f\x00\x5f" + vec([b"\x7f\x00"])
                  + b"\x4f\x00\x5f" + vec([b"\x78\x00"] * 3 + [b"\x77\x01"]))
        groups = m.type_bytes + b"".join(functype(p, r) for p, r in self.FUNCS.values()) + marker
        self.section = section(1, uleb(m.type_groups + len(self.FUNCS) + 1) + groups)

    def __getitem__(self, name: str) -> int:
        return self.index[name]


def host_ref(types: Types, payload: int) -> bytes:
    """Instructions that push a host reference numbered `payload` (an externalised marker struct)."""
    return i32_const(payload) + gc(0, types["marker"]) + gc(0x1B)


class Hooks:
    """Slots of the support module's hook table: one per export, then call-ref, table-get and
    table-set."""

    def __init__(self, m: Module):
        self.exports = len(m.exports)
        self.callref, self.tget, self.tset = self.exports, self.exports + 1, self.exports + 2
        self.size = self.exports + 3


def support_module(m: Module) -> bytes:
    """The host of binaryen's fuzzer as a module: every import `m` makes of "fuzzing-support" and
    "__fuzz_import" (raises Unsupported for one binaryen's host has not either), plus __log_count,
    __log_entry and what the linker imports (__hooks, __jstag, __jserror)."""
    types = Types(m)
    hooks = Hooks(m)
    funcs: list[tuple[int, list[tuple[int, int]], bytes]] = []   # (type, locals, body)
    exports: list[bytes] = []
    tags: list[int] = []
    tag_index: dict[str, int] = {}
    for im in m.imports:
        if im.module not in SUPPORT_NAMES:
            raise Unsupported(f"imports {im.module}.{im.name}, which binaryen's fuzzing host does not provide")
    wanted = list(m.imports)
    for im in wanted:
        if im.kind == 4:
            if im.module != "fuzzing-support" or im.name not in SUPPORT_TAGS:
                raise Unsupported(f"imports the tag {im.module}.{im.name}")
            tag_index[im.name] = len(tags)
            tags.append(im.type_index)
            exports.append(name_bytes(im.name) + b"\x04" + uleb(tag_index[im.name]))
    for name, t in (("wasmtag", "i32"), ("jstag", "ext")):
        if name not in tag_index:
            tag_index[name] = len(tags)
            tags.append(types[t])
    wasmtag, jstag = tag_index["wasmtag"], tag_index["jstag"]

    # Globals: the log count, jserror, then the imported host references.
    G_COUNT, G_JSERROR = 0, 1
    globals_ = [b"\x7f\x01" + i32_const(0) + END, b"\x6f\x00" + host_ref(types, JSERROR) + END]
    for im in wanted:
        if im.kind == 3:
            if im.mutable or im.valtype is None or im.valtype.kind != "ref" or im.valtype.heap != "extern":
                raise Unsupported(f"imports the global {im.module}.{im.name}, not an immutable externref")
            exports.append(name_bytes(im.name) + b"\x03" + uleb(len(globals_)))
            globals_.append(im.valtype.raw + b"\x00" + host_ref(types, extern_payload(im.module, im.name)) + END)
        elif im.kind in (1, 2):
            raise Unsupported(f"imports a {'table' if im.kind == 1 else 'memory'} {im.module}.{im.name}")

    # Internal functions first: record(kind, a, b), export(i), logref(anyref).
    F_RECORD, F_EXPORT, F_LOGREF = 0, 1, 2
    throw_js = b"\x23" + uleb(G_JSERROR) + throw(jstag)
    count = b"\x23" + uleb(G_COUNT)
    addr = local_get(3)
    funcs.append((types["record"], [(1, I32)],
                  count + i32_const(LOG_CAPACITY) + b"\x49"                        # count < capacity
                  + b"\x04\x40"
                  + count + i32_const(ENTRY_BYTES) + b"\x6c" + b"\x21\x03"
                  + addr + local_get(0) + b"\x36\x02\x00"                          # i32.store
                  + addr + local_get(1) + b"\x37\x03\x08"                          # i64.store offset=8
                  + addr + local_get(2) + b"\x37\x03\x10"                          # i64.store offset=16
                  + END
                  + count + i32_const(1) + b"\x6a" + b"\x24" + uleb(G_COUNT)))
    funcs.append((types["i32"], [],
                  local_get(0) + i32_const(hooks.exports) + b"\x4f"               # i >=u exports
                  + b"\x04\x40" + throw_js + END
                  + local_get(0) + b"\x11" + uleb(types["void"]) + b"\x00"))
    zeros = b"\x42\x00\x42\x00"
    marker = types["marker"]
    funcs.append((types["logref"], [],
                  local_get(0) + b"\xd1" + b"\x04\x40" + i32_const(LOG_NULL) + zeros + call(F_RECORD) + b"\x0f" + END
                  + local_get(0) + b"\xfb\x14" + heap("i31") + b"\x04\x40"
                  + i32_const(LOG_I31) + local_get(0) + b"\xfb\x16" + heap("i31") + gc(0x1D) + b"\xac" + b"\x42\x00"
                  + call(F_RECORD) + b"\x0f" + END
                  + local_get(0) + b"\xfb\x14" + heap(marker) + b"\x04\x40"
                  + i32_const(LOG_HOST) + local_get(0) + b"\xfb\x16" + heap(marker) + gc(2, marker, 0) + b"\xad"
                  + b"\x42\x00" + call(F_RECORD) + b"\x0f" + END
                  + i32_const(LOG_OBJECT) + zeros + call(F_RECORD)))

    def indirect(slot: int, type_name: str) -> bytes:
        return i32_const(slot) + b"\x11" + uleb(types[type_name]) + b"\x00"

    def catching(body: bytes) -> bytes:
        """1 when an exception (not a trap) leaves body, else 0."""
        return (b"\x02\x40" + b"\x1f\x40" + b"\x01\x02\x00" + body + END
                + i32_const(0) + b"\x0f" + END + i32_const(1))

    impl: dict[str, bytes] = {
        "log-i32": i32_const(LOG_I32) + local_get(0) + b"\xac" + b"\x42\x00" + call(F_RECORD),
        "log-i64": i32_const(LOG_I64) + local_get(0) + b"\x42\x00" + call(F_RECORD),
        "log-f32": i32_const(LOG_F32) + local_get(0) + b"\xbc" + b"\xad" + b"\x42\x00" + call(F_RECORD),
        "log-f64": i32_const(LOG_F64) + local_get(0) + b"\xbd" + b"\x42\x00" + call(F_RECORD),
        "log-v128": (i32_const(LOG_V128) + local_get(0) + b"\xfd\x1d\x00" + local_get(0) + b"\xfd\x1d\x01"
                     + call(F_RECORD)),
        "log-anyref": local_get(0) + call(F_LOGREF),
        "log-externref": local_get(0) + gc(0x1A) + call(F_LOGREF),
        "log-funcref": (local_get(0) + b"\xd1" + b"\x04\x40" + i32_const(LOG_NULL) + zeros + call(F_RECORD)
                        + b"\x05" + i32_const(LOG_FUNCTION) + zeros + call(F_RECORD) + END),
        "throw": local_get(0) + b"\x45" + b"\x04\x40" + throw_js + END + local_get(0) + throw(wasmtag),
        "sleep": local_get(1),
        "call-export": local_get(0) + call(F_EXPORT),
        "call-export-catch": catching(local_get(0) + call(F_EXPORT)),
        "call-ref": local_get(0) + indirect(hooks.callref, "callref"),
        "call-ref-catch": catching(local_get(0) + indirect(hooks.callref, "callref")),
        "table-get": local_get(0) + indirect(hooks.tget, "tget"),
        "table-set": local_get(0) + local_get(1) + indirect(hooks.tset, "tset"),
    }
    for im in wanted:
        if im.kind != 0:
            continue
        if im.module != "fuzzing-support" or im.name not in impl:
            raise Unsupported(f"imports the function {im.module}.{im.name}, which binaryen's fuzzing host has not")
        exports.append(name_bytes(im.name) + b"\x00" + uleb(len(funcs)))
        funcs.append((im.type_index, [], impl[im.name]))

    exports.append(name_bytes("__log_count") + b"\x00" + uleb(len(funcs)))
    funcs.append((types["count"], [], count))
    at = local_get(0) + i32_const(ENTRY_BYTES) + b"\x6c"
    exports.append(name_bytes("__log_entry") + b"\x00" + uleb(len(funcs)))
    funcs.append((types["entry"], [],
                  local_get(0) + count + b"\x4f" + local_get(0) + i32_const(LOG_CAPACITY) + b"\x4f" + b"\x72"
                  + b"\x04\x40" + i32_const(-1) + zeros + b"\x0f" + END
                  + at + b"\x28\x02\x00" + at + b"\x29\x03\x08" + at + b"\x29\x03\x10"))
    exports.append(name_bytes("__hooks") + b"\x01\x00")
    exports.append(name_bytes("__jstag") + b"\x04" + uleb(jstag))
    exports.append(name_bytes("__jserror") + b"\x03" + uleb(G_JSERROR))

    pages = (LOG_CAPACITY * ENTRY_BYTES + 65535) // 65536
    return (b"\0asm\1\0\0\0" + types.section
            + section(3, vec([uleb(t) for t, _, _ in funcs]))
            + section(4, vec([b"\x70\x00" + uleb(hooks.size)]))
            + section(5, vec([b"\x01" + uleb(pages) + uleb(pages)]))
            + section(13, vec([b"\x00" + uleb(t) for t in tags]))
            + section(6, vec(globals_))
            + section(7, vec(exports))
            + section(10, vec([code_entry(loc, body) for _, loc, body in funcs])))


def _depth(m: Module, t: int, seen: frozenset = frozenset()) -> int:
    sup = m.types[t].supers
    if not sup or t in seen:
        return 0
    return 1 + _depth(m, sup[0], seen | {t})


def linker_module(m: Module) -> bytes:
    """Instantiated after the module (registered as MAIN_NAME): fills the support module's hook
    table with an adapter per export (a call as JavaScript makes it), one for call-ref and two for
    the exported "table"."""
    types = Types(m)
    hooks = Hooks(m)
    support = "fuzzing-support"
    jstag_type = next((im.type_index for im in m.imports if im.kind == 4 and im.name == "jstag"), types["ext"])
    imports = [name_bytes(support) + name_bytes("__hooks") + b"\x01" + b"\x70\x00" + uleb(hooks.size),
               name_bytes(support) + name_bytes("__jstag") + b"\x04\x00" + uleb(jstag_type),
               name_bytes(support) + name_bytes("__jserror") + b"\x03\x6f\x00"]
    n_funcs = 0
    export_func: dict[int, int] = {}       # export position -> imported function index
    for pos, ex in enumerate(m.exports):
        if ex.kind == 0:
            imports.append(name_bytes(MAIN_NAME) + name_bytes(ex.name) + b"\x00" + uleb(m.func_types[ex.index]))
            export_func[pos] = n_funcs
            n_funcs += 1
    table = next((ex for ex in m.exports if ex.kind == 1 and ex.name == "table"), None)
    table_t = m.tables[table.index] if table and table.index < len(m.tables) else None
    if table_t is not None and (table_t.elem.kind != "ref" or heap_top(m, table_t.elem.heap) != "func"):
        table_t = None
    if table_t is not None:
        imports.append(name_bytes(MAIN_NAME) + name_bytes("table") + b"\x01" + table_t.elem.raw
                       + (b"\x04" if table_t.table64 else b"\x00") + b"\x00")
    throw_js = b"\x23\x00" + throw(0)      # global 0: jserror; tag 0: jstag

    def call_as_js(t: SubType, push_callee: bytes, call_op: bytes) -> bytes:
        if not js_callable(m, t):
            return throw_js
        return (b"".join(default_value(p) for p in t.params) + push_callee + call_op
                + b"\x1a" * len(t.results))

    funcs: list[tuple[int, bytes]] = []
    for pos, ex in enumerate(m.exports):
        if pos in export_func:
            t = m.func_type(ex.index)
            funcs.append((types["void"], call_as_js(t, b"", call(export_func[pos]))))
        else:
            funcs.append((types["void"], throw_js))
    # call-ref: the reference's own type, tested deepest subtype first.
    body = local_get(0) + b"\xd1" + b"\x04\x40" + throw_js + END
    func_types = [i for i, t in enumerate(m.types) if t.kind == "func"]
    for i in sorted(func_types, key=lambda i: -_depth(m, i)):
        t = m.types[i]
        cast = local_get(0) + b"\xfb\x16" + heap(i)
        body += (local_get(0) + b"\xfb\x14" + heap(i) + b"\x04\x40"
                 + call_as_js(t, cast, b"\x14" + uleb(i)) + b"\x0f" + END)
    funcs.append((types["callref"], body + throw_js))
    # table-get, table-set on the exported table (i32 index; table64 extends it).
    if table_t is None:
        funcs.append((types["tget"], throw_js))
        funcs.append((types["tset"], throw_js))
    else:
        index = local_get(0) + (b"\xad" if table_t.table64 else b"")
        ge = b"\x5a" if table_t.table64 else b"\x4f"
        check = index + b"\xfc\x10\x01" + ge + b"\x04\x40" + throw_js + END
        value = local_get(1)
        if table_t.elem.heap != "func":
            value += b"\xfb" + (b"\x17" if table_t.elem.nullable else b"\x16") + table_t.elem.heap_bytes()
        funcs.append((types["tget"], check + index + b"\x25\x01"))
        funcs.append((types["tset"], check + index + value + b"\x26\x01"))
    elem = b"\x00" + i32_const(0) + END + vec([uleb(n_funcs + i) for i in range(len(funcs))])
    return (b"\0asm\1\0\0\0" + types.section
            + section(2, vec(imports))
            + section(3, vec([uleb(t) for t, _ in funcs]))
            + section(9, vec([elem]))
            + section(10, vec([code_entry([], body) for _, body in funcs])))


# ---------------------------------------------------------------------------------------------
# The script.

def wast_string(data: bytes) -> str:
    """A WebAssembly text string of these bytes (printable ASCII as it is, the rest escaped)."""
    out = []
    for b in data:
        c = chr(b)
        if 0x20 <= b < 0x7F and c not in '"\\':
            out.append(c)
        else:
            out.append(f"\\{b:02x}")
    return '"' + "".join(out) + '"'


def zero_arg(m: Module, t: ValType) -> str:
    """A script argument for binaryen's zero of a parameter type (a defaultable one)."""
    if t.kind in ("i32", "i64", "f32", "f64"):
        return f"({t.kind}.const 0)"
    if t.kind == "v128":
        return "(v128.const i64x2 0 0)"
    top = heap_top(m, t.heap)
    return f"(ref.null {top})"


@dataclass
class Step:
    """One command of the script whose outcome is compared: an export called or read, the log's
    length after it, or one log entry."""
    kind: str                 # call, global, count, entry
    export: str = ""
    entry: int = -1
    line: int = 0
    results: int = 0          # call: how many values the function returns
    result_types: list[ValType] = field(default_factory=list)
    skipped: str = ""         # a call binaryen does not make (a parameter it cannot send)


@dataclass
class Script:
    text: str
    steps: list[Step]
    module_lines: dict[str, int]   # support, main, linker -> the line of its (module ...)


def write_script(wasm: bytes, m: Module, log_counts: list[int] | None = None, start_logs: int = 0,
                 comments: list[str] | None = None) -> Script:
    """The probe script: the support module, the module, the linker, the log read back (what the
    start function logged), then for each export in order its call (or read) and the log read back.
    Every assertion is written so that it cannot hold (one expected value more than the export
    returns): `dlab wasm spec --verbose` then prints what each command gave, in every configuration.
    `start_logs`: how many entries the start function logged; `log_counts[i]`: how many entries
    were logged in all after export i (the entries read back after each)."""
    lines: list[str] = [f";; {c}" for c in (comments or [])]
    steps: list[Step] = []
    module_lines: dict[str, int] = {}

    def add(text: str) -> int:
        lines.append(text)
        return len(lines)

    module_lines["support"] = add(f"(module $S binary {wast_string(support_module(m))})")
    for name in SUPPORT_NAMES:
        add(f'(register "{name}" $S)')
    module_lines["main"] = add(f"(module $M binary {wast_string(wasm)})")
    add(f'(register "{MAIN_NAME}" $M)')
    module_lines["linker"] = add(f"(module $L binary {wast_string(linker_module(m))})")
    def read_log(export: str, upto: int) -> None:
        nonlocal logged
        steps.append(Step("count", export, line=add('(assert_return (invoke $S "__log_count") (i32.const 0) (i32.const 0))')))
        for k in range(logged, upto):
            steps.append(Step("entry", export, entry=k,
                              line=add(f'(assert_return (invoke $S "__log_entry" (i32.const {k})) (i32.const 0))')))
        logged = max(logged, upto)

    logged = 0
    read_log(START, start_logs)
    for i, ex in enumerate(m.exports):
        if ex.kind == 3:
            steps.append(Step("global", ex.name, line=add(f"(assert_return (get $M {wast_string(ex.name.encode())}) "
                                                           "(i32.const 0) (i32.const 0))")))
            continue
        if ex.kind != 0:
            continue
        t = m.func_type(ex.index)
        step = Step("call", ex.name, results=len(t.results), result_types=list(t.results))
        if not all(defaultable(p) for p in t.params):
            step.skipped = "a parameter binaryen cannot send (non-nullable)"
            step.line = add(f";; {ex.name}: not called (a non-nullable parameter)")
        else:
            args = " ".join(zero_arg(m, p) for p in t.params)
            impossible = " ".join(["(i32.const 0)"] * (len(t.results) + 1))
            step.line = add(f"(assert_return (invoke $M {wast_string(ex.name.encode())}{' ' + args if args else ''}) {impossible})")
        steps.append(step)
        read_log(ex.name, log_counts[i] if log_counts is not None and i < len(log_counts) else logged)
    return Script("\n".join(lines) + "\n", steps, module_lines)
