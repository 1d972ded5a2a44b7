// Native counterparts of the WebAssembly 3.0 workloads in features30.wat, for the `native` engine
// of `dlab wasm bench` (clang -O2, the same protocol as kernels.c's DLAB_NATIVE build): each
// dlab_native_<export>(size) returns the checksum the wasm export returns for that size, so the
// bench can check it before timing. They compute the same things the way a C programmer would:
//   gc_trees        malloc/free per node instead of a collector
//   vtable          a vtable of function pointers, the receiver cast to its class
//   exn_parser      setjmp/longjmp for throw and try_table; the rethrow is a longjmp from the
//                   inner handler to the outer one
//   matmul_relaxed  a multiply-add the compiler may vectorise or fuse as it likes
//   matmul_f32      the same loop in plain scalar order (the inputs are small integers, so
//                   fusing or reordering cannot change a bit; see features30.wat)
// The pseudo-random draws are features30.wat's LCG, in the same order.
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t lcg_state;
static uint32_t lcg_next(void) {
  lcg_state = lcg_state * 1103515245u + 12345u;
  return lcg_state;
}

// --- gc_trees: the node count of every tree built, 135,854 nodes at size 10 ---------------------

typedef struct TreeNode {
  struct TreeNode *left, *right;
} TreeNode;

static TreeNode* tree_bottom_up(uint32_t depth) {
  TreeNode* t = malloc(sizeof *t);
  if (!t) abort();
  t->left = depth ? tree_bottom_up(depth - 1) : NULL;
  t->right = depth ? tree_bottom_up(depth - 1) : NULL;
  return t;
}
static uint32_t tree_check(const TreeNode* t) { return t->left ? 1 + tree_check(t->left) + tree_check(t->right) : 1; }
static void tree_free(TreeNode* t) {
  if (t->left) {
    tree_free(t->left);
    tree_free(t->right);
  }
  free(t);
}
// Checks the tree, then frees it: what the collector does for the wasm version.
static uint32_t tree_check_free(TreeNode* t) {
  uint32_t n = tree_check(t);
  tree_free(t);
  return n;
}

uint32_t dlab_native_gc_trees(uint32_t size) {
  int32_t max = (int32_t)size > 6 ? (int32_t)size : 6;
  uint32_t sum = tree_check_free(tree_bottom_up((uint32_t)max + 1));
  TreeNode* long_lived = tree_bottom_up((uint32_t)max);
  for (int32_t depth = 4; depth <= max; depth += 2) {
    uint32_t iterations = 1u << (max - depth + 4);
    for (uint32_t i = 0; i < iterations; ++i) sum += tree_check_free(tree_bottom_up((uint32_t)depth));
  }
  return sum + tree_check_free(long_lived);
}

// --- vtable: one virtual call per unit of size over 4,096 objects of four classes ---------------

typedef struct Object Object;
typedef uint32_t (*Method)(Object* self, uint32_t x);
typedef struct {
  Method apply, hash;
} VTable;
struct Object {
  const VTable* vt;
};
typedef struct {
  Object base;
  uint32_t k;
} Adder;
typedef struct {
  Object base;
  uint32_t a, b;
} MulAdd;
typedef struct {
  Object base;
  uint8_t r;
} Rotator;
typedef struct {
  Object base;
  uint32_t n;
} Counter;

static uint32_t rotl32(uint32_t x, uint32_t r) { return (x << (r & 31)) | (x >> ((32 - r) & 31)); }

static uint32_t adder_apply(Object* o, uint32_t x) { return x + ((Adder*)o)->k; }
static uint32_t adder_hash(Object* o, uint32_t h) { return h * 31 + ((Adder*)o)->k; }
static uint32_t muladd_apply(Object* o, uint32_t x) { return x * ((MulAdd*)o)->a + ((MulAdd*)o)->b; }
static uint32_t muladd_hash(Object* o, uint32_t h) { return (h * 31 + ((MulAdd*)o)->a) * 31 + ((MulAdd*)o)->b; }
static uint32_t rotator_apply(Object* o, uint32_t x) { return rotl32(x, ((Rotator*)o)->r) ^ 0x2545f491u; }
static uint32_t rotator_hash(Object* o, uint32_t h) { return h * 31 + ((Rotator*)o)->r; }
static uint32_t counter_apply(Object* o, uint32_t x) { return x ^ ++((Counter*)o)->n; }
static uint32_t counter_hash(Object* o, uint32_t h) { return h * 31 + ((Counter*)o)->n; }

static const VTable kAdderVt = {adder_apply, adder_hash}, kMulAddVt = {muladd_apply, muladd_hash},
                    kRotatorVt = {rotator_apply, rotator_hash}, kCounterVt = {counter_apply, counter_hash};

static void* vt_alloc(size_t bytes) {
  void* p = malloc(bytes);
  if (!p) abort();
  return p;
}
static Object* vt_make_object(void) {
  uint32_t r = lcg_next();
  switch (r >> 30) {
    case 0: {
      Adder* o = vt_alloc(sizeof *o);
      *o = (Adder){{&kAdderVt}, (r >> 12) & 0xffff};
      return &o->base;
    }
    case 1: {
      MulAdd* o = vt_alloc(sizeof *o);
      *o = (MulAdd){{&kMulAddVt}, ((r >> 16) & 0xff) | 1, (r >> 8) & 0xff};
      return &o->base;
    }
    case 2: {
      Rotator* o = vt_alloc(sizeof *o);
      *o = (Rotator){{&kRotatorVt}, (uint8_t)(((r >> 16) & 15) + 1)};
      return &o->base;
    }
    default: {
      Counter* o = vt_alloc(sizeof *o);
      *o = (Counter){{&kCounterVt}, (r >> 16) & 0xff};
      return &o->base;
    }
  }
}

uint32_t dlab_native_vtable(uint32_t calls) {
  enum { kObjects = 4096 };
  Object* objects[kObjects];
  lcg_state = 0x1234567u;
  for (int i = 0; i < kObjects; ++i) objects[i] = vt_make_object();
  uint32_t acc = 0;
  for (uint32_t i = 0; i < calls; ++i) {
    Object* o = objects[i & (kObjects - 1)];
    acc = o->vt->apply(o, acc);
  }
  for (int i = 0; i < kObjects; ++i) acc = objects[i]->vt->hash(objects[i], acc);
  for (int i = 0; i < kObjects; ++i) free(objects[i]);
  return acc;
}

// --- exn_parser: 4,096 statements a pass, 1,024 of them malformed -------------------------------

// The text and the variables have fixed places in features30.wat's memory; here they are arrays.
// A statement is at most 18 bytes.
enum { kStatements = 4096, kTextMax = kStatements * 18 + 1 };
static uint8_t ep_text[kTextMax];
static uint32_t ep_vars[26];
static uint32_t ep_pos;  // offset into ep_text, as $pos minus 128 in the wasm
// The innermost handler; a throw longjmps to it with the payload in ep_payload.
static jmp_buf* ep_handler;
static uint32_t ep_payload;

static void ep_emit(uint8_t c) { ep_text[ep_pos++] = c; }
static void ep_emit_term(void) {
  uint32_t r = lcg_next(), v = (r >> 16) % 1000;
  if ((r >> 30) == 0) {
    ep_emit((uint8_t)('a' + v % 26));
    return;
  }
  if (v >= 100) ep_emit((uint8_t)('0' + v / 100));
  if (v >= 10) ep_emit((uint8_t)('0' + v / 10 % 10));
  ep_emit((uint8_t)('0' + v % 10));
}
// kind: 0..3 malformed as in features30.wat, 4 well-formed
static void ep_emit_expr(uint32_t kind, uint32_t terms) {
  for (uint32_t j = 0; j < terms; ++j) {
    int last = j == terms - 1;
    if (j) {
      uint32_t op = (lcg_next() >> 16) % 3;
      ep_emit(last && kind == 3 ? '#' : op == 0 ? '+' : op == 1 ? '-' : '^');
    }
    if (!(last && kind == 2)) ep_emit_term();
  }
}
static void ep_generate_text(void) {
  uint32_t bad = 0, kind = 0;
  lcg_state = 0x2545f491u;
  ep_pos = 0;
  for (uint32_t i = 0; i < kStatements; ++i) {
    if ((i & 3) == 0) {
      uint32_t r = lcg_next();
      bad = i + (r >> 30);
      kind = (r >> 28) & 3;
    }
    uint32_t t = i == bad ? kind : 4;
    uint32_t terms = (lcg_next() >> 30) + 1;
    if (t == 3 && terms == 1) terms = 2;
    uint32_t letter = (lcg_next() >> 16) % 26;
    ep_emit((uint8_t)(t == 0 ? '0' + letter % 10 : 'a' + letter));
    ep_emit(t == 1 ? ':' : '=');
    ep_emit_expr(t, terms);
    ep_emit(';');
  }
  ep_emit(0);
}

static _Noreturn void ep_fail(uint32_t kind) {
  ep_payload = ep_pos << 2 | kind;
  longjmp(*ep_handler, 1);
}
static uint32_t ep_term(void) {
  uint32_t c = ep_text[ep_pos];
  if (c - 'a' < 26) {
    ++ep_pos;
    return ep_vars[c - 'a'];
  }
  if (c - '0' >= 10) ep_fail(2);
  uint32_t v = 0;
  do {
    v = v * 10 + (c - '0');
    c = ep_text[++ep_pos];
  } while (c - '0' < 10);
  return v;
}
static void ep_expr(uint32_t* slot) {
  *slot = ep_term();
  for (;;) {
    uint32_t c = ep_text[ep_pos];
    if (c == ';') return;
    if (c != '+' && c != '-' && c != '^') ep_fail(3);
    ++ep_pos;
    uint32_t t = ep_term();
    *slot = c == '+' ? *slot + t : c == '-' ? *slot - t : *slot ^ t;
  }
}
static uint32_t ep_statement(void) {
  uint32_t v = (uint32_t)ep_text[ep_pos] - 'a';
  if (v >= 26) ep_fail(0);
  uint32_t* slot = &ep_vars[v];
  ++ep_pos;
  if (ep_text[ep_pos] != '=') ep_fail(1);
  ++ep_pos;
  uint32_t old = *slot;
  // try_table (catch_ref ...) around the expression: on a throw, roll back and rethrow outwards
  jmp_buf here, *outer = ep_handler;
  if (setjmp(here)) {
    ep_handler = outer;
    *slot = old;
    longjmp(*outer, 1);
  }
  ep_handler = &here;
  ep_expr(slot);
  ep_handler = outer;
  ++ep_pos;
  return *slot;
}

// The driver's try_table (catch ...) around one statement: 1 and its value, or 0 with the error's
// payload in ep_payload. A function of its own, so that nothing the longjmp returns past lives in
// a register the setjmp saved.
static int ep_try_statement(uint32_t* value) {
  jmp_buf driver;
  ep_handler = &driver;
  int ok = setjmp(driver) == 0;
  if (ok) *value = ep_statement();
  ep_handler = NULL;
  return ok;
}

uint32_t dlab_native_exn_parser(uint32_t passes) {
  ep_generate_text();
  memset(ep_vars, 0, sizeof ep_vars);
  uint32_t sum = 0, errors = 0, payloads = 0;
  for (uint32_t p = 0; p < passes; ++p) {
    ep_pos = 0;
    while (ep_text[ep_pos]) {
      uint32_t value;
      if (ep_try_statement(&value)) {
        sum += value;
      } else {
        // a malformed statement: count it and resynchronise after its ';'
        payloads += ep_payload;
        errors += 1;
        while (ep_text[ep_pos] != ';') ++ep_pos;
        ++ep_pos;
      }
    }
  }
  uint32_t h = (sum * 31 + errors) * 31 + payloads;
  for (int i = 0; i < 26; ++i) h = h * 31 + ep_vars[i];
  return h;
}

// --- matmul_relaxed, matmul_f32: C = A x B, N x N, entries 0..15 -------------------------------

// Rows padded to a multiple of four floats, as in the wasm's memory; the padding of B is zero.
typedef struct {
  uint32_t n, s;
  float *a, *b, *c;
} Matrices;

static Matrices mm_setup(uint32_t n) {
  Matrices m = {n, (n + 3) & ~3u, NULL, NULL, NULL};
  m.a = calloc((size_t)3 * n * m.s + 1, sizeof(float));
  if (!m.a) abort();
  m.b = m.a + (size_t)n * m.s;
  m.c = m.b + (size_t)n * m.s;
  lcg_state = 0x3c6ef372u;
  float* p = m.a;  // A, then B: 2N rows of S floats
  for (uint32_t i = 0; i < 2 * n; ++i)
    for (uint32_t j = 0; j < m.s; ++j) *p++ = j < n ? (float)(lcg_next() >> 28) : 0.0f;
  return m;
}

static uint32_t mm_hash_free(Matrices m) {
  uint32_t h = 0;
  for (uint32_t i = 0; i < m.n; ++i)
    for (uint32_t j = 0; j < m.n; ++j) {
      uint32_t bits;
      memcpy(&bits, &m.c[(size_t)i * m.s + j], sizeof bits);
      h = h * 31 + bits;
    }
  free(m.a);
  return h;
}

// The vector version's shape: four columns of C at a time, the multiply-add left to the compiler.
uint32_t dlab_native_matmul_relaxed(uint32_t n) {
  if (n == 0) return 0;
  Matrices m = mm_setup(n);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t j = 0; j < m.s; j += 4) {
      float acc[4] = {0, 0, 0, 0};
      const float* b = m.b + j;
      for (uint32_t k = 0; k < n; ++k, b += m.s) {
        float x = m.a[(size_t)i * m.s + k];
        for (int l = 0; l < 4; ++l) acc[l] += x * b[l];
      }
      memcpy(&m.c[(size_t)i * m.s + j], acc, sizeof acc);
    }
  return mm_hash_free(m);
}

uint32_t dlab_native_matmul_f32(uint32_t n) {
  if (n == 0) return 0;
  Matrices m = mm_setup(n);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      float acc = 0;
      for (uint32_t k = 0; k < n; ++k) acc += m.a[(size_t)i * m.s + k] * m.b[(size_t)k * m.s + j];
      m.c[(size_t)i * m.s + j] = acc;
    }
  return mm_hash_free(m);
}
