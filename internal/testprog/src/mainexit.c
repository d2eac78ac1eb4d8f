/* A test target whose main thread exits (pthread_exit) while a second
 * thread runs on, sleeping, for argv[1] seconds (default 60): a process
 * whose main thread is a zombie, which ptrace refuses, but is not exiting. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *sleeper(void *arg) {
  sleep((unsigned)(long)arg);
  exit(0);
}

int main(int argc, char **argv) {
  long secs = argc > 1 ? atol(argv[1]) : 60;
  pthread_t t;
  pthread_create(&t, 0, sleeper, (void *)secs);
  printf("ready\n"); fflush(stdout);
  pthread_exit(0);
}
