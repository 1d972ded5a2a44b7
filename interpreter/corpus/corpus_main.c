// The corpus as a command, with the usage and output of ../workloads/command_main.c:
//   PROG WORKLOAD SIZE CALLS   prints "checksum <hex>" of the last call (CALLS may be 0: start-up
//                              only, which the bench measures separately)
// Built for wasm32-wasi it is corpus_cmd.wasm, for engines other than dlab; built natively
// (DLAB_NATIVE, linked with libdlab_corpus_native.so) it is corpus_native, the reference that the
// wasm checksums are checked against.
#include <stdlib.h>
#include <string.h>

#include "corpus.h"

#define CORPUS_WORKLOAD(name, size, quick, role, what) uint32_t CORPUS_SYMBOL(name)(uint32_t);
#include "corpus.def"
#undef CORPUS_WORKLOAD

static const struct {
  const char* name;
  uint32_t (*fn)(uint32_t);
  uint32_t size, quick;
  const char* role;
} kWorkloads[] = {
#define CORPUS_WORKLOAD(name, size, quick, role, what) {#name, CORPUS_SYMBOL(name), size, quick, role},
#include "corpus.def"
#undef CORPUS_WORKLOAD
};
#define NUM_WORKLOADS (sizeof kWorkloads / sizeof kWorkloads[0])

// A decimal argument below 2^32, or -1 when it is not one (64-bit: long is 32 bits on wasm32).
static int64_t parse_count(const char* s) {
  char* end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  return *s >= '0' && *s <= '9' && *end == '\0' && v <= 0xFFFFFFFFull ? (int64_t)v : -1;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s WORKLOAD SIZE CALLS\n  workloads (default size, quick size, role):\n", argv[0]);
    for (size_t i = 0; i < NUM_WORKLOADS; ++i)
      fprintf(stderr, "    %-8s %6u %6u  %s\n", kWorkloads[i].name, kWorkloads[i].size, kWorkloads[i].quick, kWorkloads[i].role);
    return 2;
  }
  size_t w = 0;
  while (w < NUM_WORKLOADS && strcmp(kWorkloads[w].name, argv[1]) != 0) ++w;
  if (w == NUM_WORKLOADS) {
    fprintf(stderr, "%s: no workload %s in this build\n", argv[0], argv[1]);
    return 3;
  }
  int64_t size = parse_count(argv[2]), calls = parse_count(argv[3]);
  if (size < 0 || calls < 0) {
    fprintf(stderr, "%s: SIZE and CALLS must be decimal numbers below 2^32\n", argv[0]);
    return 2;
  }
  uint32_t sum = 0;
  for (int64_t i = 0; i < calls; ++i) sum = kWorkloads[w].fn((uint32_t)size);
  printf("checksum %08x\n", sum);
  // A failed call prints why and returns CORPUS_FAILED; say so in the exit status too.
  return calls > 0 && sum == CORPUS_FAILED ? 1 : 0;
}
