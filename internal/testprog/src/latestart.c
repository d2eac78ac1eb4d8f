/* A test target whose main thread sleeps argv[1] milliseconds (default
 * 300), then starts argv[2] threads (default 2) that each spin for argv[3]
 * milliseconds of CPU time (default 1500), argv[4] milliseconds more for
 * each thread after the first (default 0), and joins them: threads that
 * start once a profiler's first listings are over, or end at different
 * times. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;
static double spin_ms = 1500, step_ms = 0;

static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void spin(double ms) {
  while (cpu_ms() < ms) for (int i = 0; i < 1000; i++) sink++;
}

static void *worker(void *arg) {
  spin(spin_ms + step_ms * (long)arg);
  return NULL;
}

int main(int argc, char **argv) {
  int delay = argc > 1 ? atoi(argv[1]) : 300;
  int n = argc > 2 ? atoi(argv[2]) : 2;
  if (argc > 3) spin_ms = atof(argv[3]);
  if (argc > 4) step_ms = atof(argv[4]);
  if (n < 1 || n > 64) n = 2;
  usleep(delay * 1000);
  pthread_t th[64];
  for (int i = 0; i < n; i++) pthread_create(&th[i], NULL, worker, (void *)(long)i);
  for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
  return 0;
}
