/* A thread whose stack is deep in frames that keep frame records, under a
 * leaf that keeps none (spin, as in leaf.c: gcc -O1 -fno-omit-frame-pointer
 * omits it in leaves), and whose outermost frame is the C library's clone
 * (its child's entry marks itself outermost in its unwind table): a kernel
 * callchain is right from deep's frames on, and a small stack copy holds
 * spin's caller. Started with clone() on a stack of its own, so that no
 * frame without a record lies below it (pthread's start_thread keeps none).
 * main prints "ready" and sleeps; the thread recurses DEPTH frames of 256
 * bytes, then spins. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define DEPTH 24

volatile unsigned long sink;
volatile int stop;

__attribute__((noinline)) void spin(void) {
  while (!stop) sink++;
}

__attribute__((noinline)) void deep(int n) {
  volatile char pad[256];
  pad[0] = (char)n;
  if (n > 0)
    deep(n - 1);
  else
    spin();
  sink += pad[0]; /* not a tail call */
}

__attribute__((noinline)) int thread_main(void *arg) {
  (void)arg;
  deep(DEPTH);
  return 0;
}

int main(void) {
  size_t size = 1 << 20;
  char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return 1;
  int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
  /* Room above the outermost frame, as pthread leaves: its CFA lies past
   * the call's return address. */
  if (clone(thread_main, stack + size - 4096, flags, NULL) < 0) return 2;
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();
}
