/* A test target with frame pointers everywhere in its own code: N threads
 * (argv[1], default 4) each recurse to a different depth (argv[2] and five
 * more per thread, default 10) and spin there; with argv[3], each level's
 * frame holds that many more bytes. It prints "ready" once every thread is
 * spinning. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <alloca.h>
#include <string.h>
#include <unistd.h>

volatile unsigned long sink;
static volatile int started;
static int pad;
volatile int stop; /* never set: keeps spin from being treated as noreturn */

__attribute__((noinline)) void spin(void) {
  __sync_fetch_and_add(&started, 1);
  while (!stop) sink++;
}
__attribute__((noinline)) void recurse(int n) {
  if (pad > 0) {
    char *p = alloca(pad);
    memset(p, 0, pad);
    sink += p[pad - 1];
  }
  if (n == 0) spin(); else recurse(n - 1);
  sink++;
}
void *worker(void *arg) { recurse((int)(long)arg); return 0; }

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4;
  int depth = argc > 2 ? atoi(argv[2]) : 10;
  pad = argc > 3 ? atoi(argv[3]) : 0;
  pthread_t *t = calloc(n, sizeof *t);
  for (long i = 0; i < n; i++) pthread_create(&t[i], 0, worker, (void *)(depth + i * 5));
  while (started < n) usleep(1000);
  printf("ready\n"); fflush(stdout);
  for (int i = 0; i < n; i++) pthread_join(t[i], 0);
  return 0;
}
