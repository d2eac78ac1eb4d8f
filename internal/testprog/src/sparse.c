/* A test target of many light threads: `n` (argv[1], default 1000) threads
 * that each run for `us` microseconds of their own CPU time (argv[2],
 * default 50) and then sleep `ms` milliseconds (argv[3], default 100),
 * forever. None uses a 99 Hz sampling period of CPU time in under 20 s. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long run_ns, sleep_ms;
volatile unsigned long sink;

static long thread_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

void spin(void) {
  long until = thread_ns() + run_ns;
  while (thread_ns() < until) sink++;
}

void *light(void *arg) {
  (void)arg;
  struct timespec nap = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000L};
  for (;;) {
    spin();
    nanosleep(&nap, 0);
  }
  return 0;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  run_ns = (argc > 2 ? atol(argv[2]) : 50) * 1000L;
  sleep_ms = argc > 3 ? atol(argv[3]) : 100;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 << 10);
  for (int i = 0; i < n; i++) {
    pthread_t t;
    if (pthread_create(&t, &attr, light, 0) != 0) {
      perror("pthread_create");
      return 1;
    }
  }
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();
}
