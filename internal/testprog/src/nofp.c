/* A test target for walks by unwind tables alone (built with -O2 and
 * without frame pointers): its thread recurses argv[1] levels (default
 * 12), through functions that keep no frame record, and spins there. It
 * prints "ready" once the thread spins. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

volatile unsigned long sink;
static volatile int started;
volatile int stop; /* never set: keeps spin from being treated as noreturn */

__attribute__((noinline)) void spin(void) {
  started = 1;
  while (!stop) sink++;
}

__attribute__((noinline)) unsigned long recurse(int n) {
  if (n == 0) spin(); else sink += recurse(n - 1) * 3;
  return sink;
}

static void *run(void *arg) { return (void *)recurse((int)(long)arg); }

int main(int argc, char **argv) {
  long depth = argc > 1 ? atol(argv[1]) : 12;
  pthread_t th;
  pthread_create(&th, NULL, run, (void *)depth);
  while (!started) usleep(1000);
  printf("ready\n");
  fflush(stdout);
  pthread_join(th, NULL);
  return 0;
}
