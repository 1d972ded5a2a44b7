// A WASI test program whose output must equal the same source compiled natively: integer and
// floating-point arithmetic, malloc/free, qsort through a function pointer (call_indirect),
// recursion, 64-bit math, string formatting, and its exit status.
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t xorshift(uint32_t* s) {
  uint32_t x = *s;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *s = x;
}

static int cmp_u32(const void* a, const void* b) {
  uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
  return (x > y) - (x < y);
}

static uint64_t fib(int n) { return n < 2 ? (uint64_t)n : fib(n - 1) + fib(n - 2); }

static int sieve(int n) {
  char* composite = calloc((size_t)n + 1, 1);
  int primes = 0;
  for (int i = 2; i <= n; ++i) {
    if (composite[i]) continue;
    ++primes;
    for (long j = (long)i * i; j <= n; j += i) composite[j] = 1;
  }
  free(composite);
  return primes;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20000;
  uint32_t seed = 2463534242u;
  uint32_t* v = malloc(sizeof(uint32_t) * (size_t)n);
  for (int i = 0; i < n; ++i) v[i] = xorshift(&seed);
  qsort(v, (size_t)n, sizeof(uint32_t), cmp_u32);
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < n; ++i) h = (h ^ v[i]) * 1099511628211ull;
  free(v);
  double acc = 0;
  for (int i = 1; i <= 1000; ++i) acc += sqrt((double)i) / (1.0 + sin(i * 0.001));
  char buf[64];
  snprintf(buf, sizeof buf, "%.6f", acc);
  printf("sorted-hash %016" PRIx64 "\n", h);
  printf("fib(24) %" PRIu64 "\n", fib(24));
  printf("primes<=%d %d\n", n, sieve(n));
  printf("float %s len %zu\n", buf, strlen(buf));
  printf("i64 div %" PRId64 " rem %" PRId64 "\n", (int64_t)-9000000000000000000ll / 7, (int64_t)-9000000000000000000ll % 7);
  return (int)(h & 0x7F);
}
