/* A test target that creates about argv[1] (default 5000) short-lived threads
 * a second, forever: each spins for about a millisecond and ends, so that
 * threads end between any listing of them and their capture. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;

static void *brief(void *arg) {
  (void)arg;
  for (int i = 0; i < 500000; i++) sink++;
  return 0;
}

int main(int argc, char **argv) {
  long rate = argc > 1 ? atol(argv[1]) : 5000;
  if (rate < 1) rate = 1;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  printf("ready\n"); fflush(stdout);
  /* Five at a time: a sleep lasts at least about 60 microseconds. */
  struct timespec gap = {0, 5 * 1000000000L / rate};
  for (;;) {
    for (int i = 0; i < 5; i++) {
      pthread_t t;
      pthread_create(&t, &attr, brief, 0);
    }
    nanosleep(&gap, 0);
  }
}
