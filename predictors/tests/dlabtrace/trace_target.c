// A program whose function traced_work does loads, stores, a load and store of one address (an
// add to memory), conditional branches and an indirect call out of the traced range, for the test
// that dlabtrace writes lackey's trace of that range (dlabtrace_matches_lackey.sh).
#include <stdio.h>

static volatile int slots[64];

__attribute__((noinline)) int outside_helper(int x) { return x * 3 + 1; }

__attribute__((noinline)) int traced_work(int n, int (*f)(int)) {
  int sum = 0;
  for (int i = 0; i < n; ++i) {
    slots[i & 63] += i;  // a load and a store of one slot
    if (slots[(i * 7) & 63] & 1) sum += f(i);
    else sum ^= slots[(i + 1) & 63];
  }
  return sum;
}

int main(void) {
  printf("%d\n", traced_work(200, outside_helper));
  return 0;
}
