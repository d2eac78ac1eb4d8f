/* A target that puts at its own executable's path, once it is mapped, a
 * symbolic link to another file (argv[1]) and spins in SPIN(): a profiler
 * that opens the image at its path reads the other file's symbols.
 * secret.c builds the same code with another name for SPIN. */
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#ifndef SPIN
#define SPIN spin
#endif

volatile unsigned long sink;

__attribute__((noinline)) void SPIN(void) {
  for (;;) sink++;
}

int main(int argc, char **argv) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n < 0 || argc < 2) return 2;
  self[n] = 0;
  if (unlink(self) != 0 || symlink(argv[1], self) != 0) {
    perror("swapself");
    return 1;
  }
  printf("ready\n");
  fflush(stdout);
  SPIN();
}
