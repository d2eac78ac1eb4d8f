#include "common.h"
__attribute__((noinline)) int fd(int n) { return fold(n) * 3; }
void sink(int v) { __asm__ volatile("" : : "r"(v)); }
