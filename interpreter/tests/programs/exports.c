// A reactor-style module for `dlab wasm run --invoke`: plain exports, no WASI start.
#include <stdint.h>

__attribute__((export_name("add"))) int32_t add(int32_t a, int32_t b) { return a + b; }
__attribute__((export_name("mul64"))) int64_t mul64(int64_t a, int64_t b) { return a * b; }
__attribute__((export_name("hypot"))) double hyp(double a, double b) { return __builtin_sqrt(a * a + b * b); }
__attribute__((export_name("div"))) int32_t divide(int32_t a, int32_t b) { return a / b; }
static volatile int depth_sink;
__attribute__((export_name("recurse"))) int32_t recurse(int32_t n) {
  depth_sink = n;
  return n == 0 ? 0 : 1 + recurse(n - 1);
}
