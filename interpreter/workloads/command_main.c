// The workloads as a WASI command, for engines other than dlab (`dlab wasm bench --peer`): it is
// built from kernels.c without the tail-call and bulk-memory features, which not every engine
// has. Usage: kernels_cmd.wasm WORKLOAD SIZE CALLS; prints "checksum <hex>" of the last call.
// CALLS may be 0: start-up only, which the bench measures separately.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.c"

typedef uint32_t (*Kernel)(uint32_t);
// The kernels suite's rows of workloads.def. A kernel this build lacks (statemach: no tail calls
// here) is NULL: its name is stringified where the row is read, before `statemach` expands.
#if !defined(DLAB_HAVE_STATEMACH)
#define statemach NULL
#endif
#define WORKLOAD(suite, name, size, quick, profile, what) DLAB_ROW_##suite(#name, name)
#define DLAB_ROW_kernels(text, fn) {text, fn},
#define DLAB_ROW_features30(text, fn)
static const struct {
  const char* name;
  Kernel fn;
} kKernels[] = {
#include "workloads.def"
};
#undef WORKLOAD

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s WORKLOAD SIZE CALLS\n", argv[0]);
    return 2;
  }
  Kernel fn = NULL;
  for (size_t i = 0; i < sizeof kKernels / sizeof kKernels[0]; ++i)
    if (strcmp(kKernels[i].name, argv[1]) == 0) fn = kKernels[i].fn;  // NULL: not in this build
  if (!fn) {
    fprintf(stderr, "%s: no workload %s in this build\n", argv[0], argv[1]);
    return 3;
  }
  uint32_t size = (uint32_t)strtoul(argv[2], NULL, 10), calls = (uint32_t)strtoul(argv[3], NULL, 10), sum = 0;
  for (uint32_t i = 0; i < calls; ++i) sum = fn(size);
  printf("checksum %08x\n", sum);
  return 0;
}
