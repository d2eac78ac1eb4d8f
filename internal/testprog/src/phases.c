/* A busy test target whose time is spread evenly over many stacks: its one
 * thread recurses to depth 0, 1, ..., 39 in turn and spins a little at the
 * bottom each time (about 0.2 ms), so that each depth's stack holds about
 * 1/40 of its CPU time, however the samples fall. It prints "ready" and
 * runs until killed. */
#include <stdio.h>

volatile unsigned long sink;
volatile int stop; /* never set */

__attribute__((noinline)) void spin(void) {
  for (int i = 0; i < 200000 && !stop; i++) sink++;
}
__attribute__((noinline)) void recurse(int n) {
  if (n == 0) spin(); else recurse(n - 1);
  sink++;
}

int main(void) {
  printf("ready\n");
  fflush(stdout);
  for (unsigned d = 0; !stop; d = (d + 1) % 40) recurse(d);
  return 0;
}
