/* The callers of the leaf fixtures (leaf.c, redzone.c): alpha calls LEAF,
 * which the including file defines, and main prints "ready" and calls
 * alpha. */
#include <stdio.h>

extern volatile unsigned long sink;

__attribute__((noinline)) void alpha(void) {
  LEAF();
  sink += 2; /* not a tail call */
}

int main(void) {
  printf("ready\n");
  fflush(stdout);
  alpha();
  return (int)sink;
}
