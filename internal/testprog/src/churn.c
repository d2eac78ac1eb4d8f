/* A test target whose threads come and go: it keeps `n` (argv[1]) short-lived
 * threads alive, each spinning for a few milliseconds and exiting, forever.
 * With argv[2] == "exec" it instead execs /bin/sleep after about 300 ms. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile unsigned long sink;

void *brief(void *arg) {
  (void)arg;
  for (int i = 0; i < 5000000; i++) sink++;
  return 0;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4;
  int do_exec = argc > 2 && strcmp(argv[2], "exec") == 0;
  printf("ready\n"); fflush(stdout);
  if (do_exec) {
    for (int i = 0; i < 30; i++) { brief(0); usleep(1000); }
    execl("/bin/sleep", "sleep", "30", (char *)0);
    return 1;
  }
  for (;;) {
    pthread_t *t = calloc(n, sizeof *t);
    for (int i = 0; i < n; i++) pthread_create(&t[i], 0, brief, 0);
    for (int i = 0; i < n; i++) pthread_join(t[i], 0);
    free(t);
  }
}
