/* A test target that execs argv[1] with the arguments after it: a command
 * that runs another program under its own PID. With "-signal" first, it
 * prints "ready" and execs only once it gets SIGUSR1 (which stays blocked
 * in the program it execs). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int first = 1;
  if (argc > 1 && strcmp(argv[1], "-signal") == 0) {
    sigset_t set;
    int sig;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    printf("ready\n");
    fflush(stdout);
    sigwait(&set, &sig);
    first = 2;
  }
  if (first >= argc) {
    fprintf(stderr, "usage: execto [-signal] PROGRAM [ARGS...]\n");
    return 2;
  }
  execv(argv[first], argv + first);
  perror("execto: execv");
  return 127;
}
