/* The leaf case of issue 13: spin, a leaf, called from alpha, called from
 * main. Built by gcc at -O1 with -fno-omit-frame-pointer, spin has no
 * frame record (gcc omits it in leaves), so a frame-pointer walk goes from
 * spin straight to main; with -fomit-frame-pointer no function has one. It
 * prints "ready" and spins. */

volatile unsigned long sink;
volatile int stop;

__attribute__((noinline)) void spin(void) {
  while (!stop) sink++;
}

#define LEAF spin
#include "calls_leaf.h"
