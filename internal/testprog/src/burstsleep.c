/* A test target that argv[1] times (default 8) spins argv[2] milliseconds
 * of CPU time (default 100), then sleeps argv[3] milliseconds (default
 * 300): a process whose one thread is busy in bursts and long asleep
 * between them. */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;

static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void burst(double until) {
  while (cpu_ms() < until) for (int i = 0; i < 1000; i++) sink++;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 8;
  double busy = argc > 2 ? atof(argv[2]) : 100;
  int sleep_ms = argc > 3 ? atoi(argv[3]) : 300;
  for (int i = 0; i < n; i++) {
    burst(cpu_ms() + busy);
    usleep(sleep_ms * 1000);
  }
  return 0;
}
