// Workloads for `dlab wasm bench`: small kernels with different instruction mixes, built for
// wasm32-wasi as a reactor (exports, no _start). Each export takes a size and returns a checksum,
// so every dispatch mode can be checked to compute the same thing before it is timed.
//   fib       calls and returns (recursion)
//   sieve     byte loads/stores and tight loops
//   sort      qsort: calls through a function pointer (call_indirect)
//   crc32     table lookups, shifts and xors
//   mandel    f64 arithmetic and compares
//   bytecode  a little switch-based bytecode interpreter (dispatch inside dispatch)
#include <stdint.h>
#include <stdlib.h>

#define EXPORT(name) __attribute__((export_name(#name)))

static uint32_t fib_rec(uint32_t n) { return n < 2 ? n : fib_rec(n - 1) + fib_rec(n - 2); }
EXPORT(fib) uint32_t fib(uint32_t n) { return fib_rec(n); }

EXPORT(sieve) uint32_t sieve(uint32_t n) {
  uint8_t* composite = calloc(n + 1, 1);
  uint32_t count = 0;
  for (uint32_t i = 2; i <= n; ++i) {
    if (composite[i]) continue;
    ++count;
    for (uint64_t j = (uint64_t)i * i; j <= n; j += i) composite[j] = 1;
  }
  free(composite);
  return count;
}

static int cmp(const void* a, const void* b) {
  uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
  return (x > y) - (x < y);
}
EXPORT(sort) uint32_t sort(uint32_t n) {
  uint32_t* v = malloc(n * sizeof(uint32_t));
  uint32_t s = 2463534242u;
  for (uint32_t i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    v[i] = s;
  }
  qsort(v, n, sizeof(uint32_t), cmp);
  uint32_t h = 0;
  for (uint32_t i = 0; i < n; ++i) h = h * 31 + v[i];
  free(v);
  return h;
}

EXPORT(crc32) uint32_t crc32(uint32_t n) {
  static uint32_t table[256];
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  uint32_t crc = 0xFFFFFFFFu;
  for (uint32_t i = 0; i < n; ++i) crc = table[(crc ^ (uint8_t)(i * 7)) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

EXPORT(mandel) uint32_t mandel(uint32_t n) {
  uint32_t inside = 0;
  for (uint32_t y = 0; y < n; ++y)
    for (uint32_t x = 0; x < n; ++x) {
      double cr = -2.0 + 2.5 * x / n, ci = -1.25 + 2.5 * y / n, zr = 0, zi = 0;
      int k = 0;
      while (k < 64 && zr * zr + zi * zi < 4.0) {
        double t = zr * zr - zi * zi + cr;
        zi = 2 * zr * zi + ci;
        zr = t;
        ++k;
      }
      inside += k == 64;
    }
  return inside;
}

// Opcodes of a tiny machine with an accumulator `a`, a counter `c` and an operand stack; the
// program mixes c into a until c counts down to zero.
enum { LOADC, PUSH, MUL, ADD, XORA, DECC, JNZC, HALT };
EXPORT(bytecode) uint32_t bytecode(uint32_t n) {
  static const uint8_t prog[] = {LOADC, PUSH, 3, MUL, PUSH, 7, ADD, XORA, DECC, JNZC, 0, HALT};
  uint32_t stack[8], sp = 0, pc = 0, a = 0, c = n;
  for (;;) {
    switch (prog[pc++]) {
      case LOADC: stack[sp++] = c; break;
      case PUSH: stack[sp++] = prog[pc++]; break;
      case MUL: sp--; stack[sp - 1] *= stack[sp]; break;
      case ADD: sp--; stack[sp - 1] += stack[sp]; break;
      case XORA: a = (a ^ stack[--sp]) * 0x9E3779B1u; break;
      case DECC: c--; break;
      case JNZC: { uint8_t t = prog[pc++]; if (c) pc = t; break; }
      default: return a;
    }
  }
}
