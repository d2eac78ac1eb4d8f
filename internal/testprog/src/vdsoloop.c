/* A test target whose thread spends its time in the vDSO: it calls
 * clock_gettime(CLOCK_MONOTONIC) in a loop, through functions that keep
 * no frame record when built without frame pointers, for argv[1] seconds
 * (default 600). It prints "ready" once the thread runs. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;
static volatile int started;

__attribute__((noinline)) void clockloop(double secs) {
  struct timespec t0, ts;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  started = 1;
  for (;;) {
    clock_gettime(CLOCK_MONOTONIC, &ts);
    sink += (unsigned long)ts.tv_nsec;
    if ((double)(ts.tv_sec - t0.tv_sec) + (ts.tv_nsec - t0.tv_nsec) / 1e9 >= secs) return;
  }
}

static void *run(void *arg) {
  clockloop(*(double *)arg);
  return NULL;
}

int main(int argc, char **argv) {
  double secs = argc > 1 ? atof(argv[1]) : 600;
  pthread_t th;
  pthread_create(&th, NULL, run, &secs);
  while (!started) usleep(1000);
  printf("ready\n");
  fflush(stdout);
  pthread_join(th, NULL);
  return 0;
}
