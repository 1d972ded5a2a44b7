// Workloads for `dlab wasm bench`: small kernels with different instruction mixes, built for
// wasm32-wasi as a reactor (exports, no _start). Each export takes a size and returns a checksum,
// so every dispatch mode can be checked to compute the same thing before it is timed.
//   fib       calls and returns (recursion)
//   sieve     byte loads/stores and tight loops
//   sort      qsort: calls through a function pointer (call_indirect)
//   crc32     table lookups, shifts and xors
//   mandel    f64 arithmetic and compares
//   bytecode  a little switch-based bytecode interpreter (dispatch inside dispatch)
//   matmul    f32 matrix multiply (loads, multiply-adds, nested loops)
//   biquad    an audio-DSP loop: a biquad IIR section and an 8-tap FIR over f32 samples
//   bulkmem   memory.copy and memory.fill (built with -mbulk-memory)
//   vdispatch virtual calls: shapes through a table of function pointers (call_indirect)
//   statemach a state machine of tail calls (return_call; built with -mtail-call)
//   coremix   a CoreMark-style mix written for this project: a linked list, a small matrix, a
//             character state machine and a CRC-16, every part feeding the checksum
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// KERNEL(name) declares an exported workload: in the wasm build an export of that name; in the
// native build (DLAB_NATIVE, linked into dlab so `dlab wasm bench` times native code under the same
// protocol) a function dlab_native_<name>.
#if defined(DLAB_NATIVE)
#define KERNEL(name) uint32_t dlab_native_##name
#else
#define KERNEL(name) __attribute__((export_name(#name))) uint32_t name
#endif

static uint32_t fib_rec(uint32_t n) { return n < 2 ? n : fib_rec(n - 1) + fib_rec(n - 2); }
KERNEL(fib)(uint32_t n) { return fib_rec(n); }

KERNEL(sieve)(uint32_t n) {
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
KERNEL(sort)(uint32_t n) {
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

KERNEL(crc32)(uint32_t n) {
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

KERNEL(mandel)(uint32_t n) {
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
KERNEL(bytecode)(uint32_t n) {
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

// Checksum of floats by their bits, so every engine must produce the same values exactly.
static uint32_t fbits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

KERNEL(matmul)(uint32_t reps) {
  enum { N = 24 };
  static float a[N][N], b[N][N], c[N][N];
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      a[i][j] = (float)((i * 7 + j * 3) % 11) * 0.25f - 1.0f;
      b[i][j] = (float)((i * 5 + j * 13) % 9) * 0.125f + 0.5f;
    }
  uint32_t h = 0;
  for (uint32_t r = 0; r < reps; ++r) {
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) {
        float acc = 0;
        for (int k = 0; k < N; ++k) acc += a[i][k] * b[k][j];
        c[i][j] = acc;
      }
    a[r % N][(r * 5) % N] = c[(r * 3) % N][r % N] * 0.001f;  // the next repetition depends on this one
    h = h * 31 + fbits(c[r % N][(r * 7) % N]);
  }
  return h;
}

KERNEL(biquad)(uint32_t n) {
  static const float fir[8] = {0.02f, 0.07f, 0.14f, 0.27f, 0.27f, 0.14f, 0.07f, 0.02f};
  const float b0 = 0.2066f, b1 = 0.4131f, b2 = 0.2066f, a1 = -0.3695f, a2 = 0.1958f;
  float x1 = 0, x2 = 0, y1 = 0, y2 = 0, delay[8] = {0};
  uint32_t s = 12345, h = 0;
  for (uint32_t i = 0; i < n; ++i) {
    s = s * 1103515245u + 12345u;
    float x = (float)((int32_t)(s >> 8) % 2000) * 0.0005f;
    float y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2;
    x2 = x1, x1 = x, y2 = y1, y1 = y;
    for (int k = 7; k > 0; --k) delay[k] = delay[k - 1];
    delay[0] = y;
    float out = 0;
    for (int k = 0; k < 8; ++k) out += fir[k] * delay[k];
    if ((i & 1023) == 0) h = h * 31 + fbits(out);
  }
  return h + fbits(y1);
}

KERNEL(bulkmem)(uint32_t reps) {
  enum { SIZE = 1 << 16 };
  uint8_t* a = malloc(SIZE);
  uint8_t* b = calloc(SIZE, 1);  // every byte read is defined: native and wasm must agree
  uint32_t h = 0;
  for (uint32_t r = 0; r < reps; ++r) {
    __builtin_memset(a, (int)(r & 0xff), SIZE);
    a[r % SIZE] = (uint8_t)(r * 7);
    uint32_t len = 1024 + (r * 4093) % (SIZE - 2048);
    __builtin_memcpy(b + (r % 512), a + (r % 1024), len);
    __builtin_memmove(b + 1, b, len / 2);
    h = h * 31 + b[(r * 13) % SIZE] + b[len];
  }
  free(a);
  free(b);
  return h;
}

// Virtual dispatch: each shape kind's area through a function-pointer table, in an order that
// changes kind from call to call.
typedef struct Shape Shape;
struct Shape {
  uint32_t (*area)(const Shape*);
  uint32_t w, h;
};
static uint32_t rect_area(const Shape* s) { return s->w * s->h; }
static uint32_t tri_area(const Shape* s) { return s->w * s->h / 2; }
static uint32_t square_area(const Shape* s) { return s->w * s->w; }
static uint32_t circle_area(const Shape* s) { return 3 * s->w * s->w + (s->h & 1); }
static uint32_t (*const kAreas[4])(const Shape*) = {rect_area, tri_area, square_area, circle_area};
KERNEL(vdispatch)(uint32_t n) {
  enum { M = 64 };
  Shape shapes[M];
  for (int i = 0; i < M; ++i) shapes[i] = (Shape){kAreas[(i * 7 + i / 3) % 4], (uint32_t)i + 1, (uint32_t)(i * 3) % 17 + 1};
  uint32_t total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Shape* s = &shapes[(i * 13) % M];
    total += s->area(s);
    s->h = (s->h + total) % 97 + 1;
  }
  return total;
}

// A state machine whose states tail-call each other (return_call in wasm): it scans a generated
// byte stream for numbers, words and separators. Only where tail calls exist: natively, and in
// wasm builds with the tail-call feature (the peers' command build has none; without tail calls
// the recursion would be as deep as the input).
#if !defined(__wasm__) || defined(__wasm_tail_call__)
#define DLAB_HAVE_STATEMACH 1
static uint32_t st_space(const uint8_t* p, uint32_t n, uint32_t acc);
static uint32_t st_number(const uint8_t* p, uint32_t n, uint32_t acc);
static uint32_t st_word(const uint8_t* p, uint32_t n, uint32_t acc);
static uint32_t st_dispatch(const uint8_t* p, uint32_t n, uint32_t acc) {
  if (n == 0) return acc;
  if (*p >= '0' && *p <= '9') __attribute__((musttail)) return st_number(p, n, acc * 3 + 1);
  if (*p >= 'a' && *p <= 'z') __attribute__((musttail)) return st_word(p, n, acc * 5 + 2);
  __attribute__((musttail)) return st_space(p, n, acc);
}
static uint32_t st_space(const uint8_t* p, uint32_t n, uint32_t acc) {
  if (n == 0) return acc;
  if (*p == ' ' || *p == ',') __attribute__((musttail)) return st_space(p + 1, n - 1, acc + 1);
  __attribute__((musttail)) return st_dispatch(p, n, acc);
}
static uint32_t st_number(const uint8_t* p, uint32_t n, uint32_t acc) {
  if (n == 0 || *p < '0' || *p > '9') __attribute__((musttail)) return st_dispatch(p, n, acc);
  __attribute__((musttail)) return st_number(p + 1, n - 1, acc * 10 + (uint32_t)(*p - '0'));
}
static uint32_t st_word(const uint8_t* p, uint32_t n, uint32_t acc) {
  if (n == 0 || *p < 'a' || *p > 'z') __attribute__((musttail)) return st_dispatch(p, n, acc);
  __attribute__((musttail)) return st_word(p + 1, n - 1, (acc ^ *p) * 16777619u);
}
KERNEL(statemach)(uint32_t n) {
  static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz ,";
  uint8_t* text = malloc(n);
  uint32_t s = 7;
  for (uint32_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    text[i] = (uint8_t)alphabet[(s >> 16) % (sizeof alphabet - 1)];
  }
  uint32_t r = st_dispatch(text, n, 0);
  free(text);
  return r;
}
#endif

// CoreMark-style mix (written for this project, not EEMBC's code): per iteration, a linked list
// is searched, reversed and summed; a small matrix is multiplied by a constant and a vector; a
// character state machine classifies a string; and everything goes through a CRC-16.
typedef struct Node {
  struct Node* next;
  int16_t value;
  uint16_t index;
} Node;

static uint16_t crc16_byte(uint8_t b, uint16_t crc) {
  for (int i = 0; i < 8; ++i) {
    uint16_t mix = (uint16_t)((crc ^ b) & 1);
    crc >>= 1;
    if (mix) crc ^= 0xA001;
    b >>= 1;
  }
  return crc;
}
static uint16_t crc16_u32(uint32_t v, uint16_t crc) {
  for (int i = 0; i < 4; ++i) crc = crc16_byte((uint8_t)(v >> (8 * i)), crc);
  return crc;
}

static Node* list_reverse(Node* head) {
  Node* prev = NULL;
  while (head) {
    Node* next = head->next;
    head->next = prev;
    prev = head;
    head = next;
  }
  return prev;
}

static int classify(const char* s) {  // 0 int, 1 float, 2 scientific, 3 invalid
  enum { START, INT, FRAC, EXP, EXPSIGN, EXPDIGIT, BAD } st = START;
  for (; *s; ++s) {
    char ch = *s;
    int digit = ch >= '0' && ch <= '9';
    switch (st) {
      case START: st = digit || ch == '-' || ch == '+' ? INT : ch == '.' ? FRAC : BAD; break;
      case INT: st = digit ? INT : ch == '.' ? FRAC : ch == 'e' ? EXP : BAD; break;
      case FRAC: st = digit ? FRAC : ch == 'e' ? EXP : BAD; break;
      case EXP: st = ch == '-' || ch == '+' ? EXPSIGN : digit ? EXPDIGIT : BAD; break;
      case EXPSIGN:
      case EXPDIGIT: st = digit ? EXPDIGIT : BAD; break;
      case BAD: break;
    }
  }
  return st == INT ? 0 : st == FRAC ? 1 : st == EXPDIGIT ? 2 : 3;
}

KERNEL(coremix)(uint32_t iterations) {
  enum { NODES = 64, MN = 8 };
  static Node nodes[NODES];
  static int16_t mat[MN][MN], vec[MN];
  static int32_t out[MN];
  static const char* const words[] = {"1234", "-87.5", "3.5e-4", "+12e7", "x17", "0.", "--1", "6e", "42"};
  uint16_t crc = 0;
  for (int i = 0; i < NODES; ++i) {
    nodes[i].next = i + 1 < NODES ? &nodes[i + 1] : NULL;
    nodes[i].value = (int16_t)((i * 37) % 101 - 50);
    nodes[i].index = (uint16_t)i;
  }
  for (int i = 0; i < MN; ++i) {
    vec[i] = (int16_t)(i * 3 - 7);
    for (int j = 0; j < MN; ++j) mat[i][j] = (int16_t)((i * j + 5) % 13 - 6);
  }
  Node* head = &nodes[0];
  for (uint32_t it = 0; it < iterations; ++it) {
    int32_t found = -1, sum = 0;
    int16_t want = (int16_t)((int)(it % 101) - 50);
    for (Node* p = head; p; p = p->next) {
      if (found < 0 && p->value == want) found = p->index;
      sum += p->value;
    }
    head = list_reverse(head);
    crc = crc16_u32((uint32_t)found, crc16_u32((uint32_t)sum, crc));
    int16_t k = (int16_t)(it & 7);
    for (int i = 0; i < MN; ++i) {
      int32_t acc = 0;
      for (int j = 0; j < MN; ++j) acc += (int32_t)(mat[i][j] + k) * vec[j];
      out[i] = acc;
    }
    mat[it % MN][(it >> 3) % MN] = (int16_t)(out[it % MN] & 0x7f);
    for (int i = 0; i < MN; ++i) crc = crc16_u32((uint32_t)out[i], crc);
    crc = crc16_byte((uint8_t)classify(words[it % 9]), crc);
  }
  return crc;
}
