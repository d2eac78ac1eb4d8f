/* A test target like an idle daemon: the main thread and argv[1] - 1 more
 * (default 7 in all) block in different ways (pause, sleep, a condition
 * variable, a read of a pipe nobody writes, poll), using no CPU. It prints
 * "ready" once every thread is blocked. */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int fds[2];
static volatile int started;

static void *waiter(void *arg) {
  __sync_fetch_and_add(&started, 1);
  char c;
  switch ((long)arg % 4) {
  case 0:
    for (;;) sleep(1000);
  case 1:
    pthread_mutex_lock(&mu);
    for (;;) pthread_cond_wait(&cv, &mu);
  case 2:
    for (;;) if (read(fds[0], &c, 1) <= 0) pause();
  default:
    for (;;) poll(0, 0, -1);
  }
  return 0;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 7;
  if (pipe(fds) != 0) return 1;
  pthread_t t;
  for (long i = 0; i < n - 1; i++) pthread_create(&t, 0, waiter, (void *)i);
  while (started < n - 1) usleep(1000);
  usleep(10000); /* the last one reaches its call */
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();
}
