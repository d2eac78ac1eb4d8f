/* A test target with a thread that spins until the process gets SIGUSR1
 * (or for at most argv[1] milliseconds, default 30000), then exits or, with
 * argv[2] == "idle", sleeps forever, while its main thread sleeps. It
 * prints "ready" once the thread runs. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;
static volatile int started;
static volatile sig_atomic_t stop;
static int idle;

static void on_usr1(int sig) { (void)sig; stop = 1; }

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void spin(double ms) {
  double end = now_ms() + ms;
  started = 1;
  while (!stop && now_ms() < end) for (int i = 0; i < 1000; i++) sink++;
}

void *worker(void *arg) {
  spin(*(double *)arg);
  while (idle) pause();
  return 0;
}

int main(int argc, char **argv) {
  double ms = argc > 1 ? atof(argv[1]) : 30000;
  idle = argc > 2 && strcmp(argv[2], "idle") == 0;
  signal(SIGUSR1, on_usr1);
  pthread_t t;
  pthread_create(&t, 0, worker, &ms);
  while (!started) usleep(1000);
  printf("ready\n"); fflush(stdout);
  pthread_join(t, 0);
  for (;;) pause();
}
