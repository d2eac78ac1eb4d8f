#include "common.h"
static int table[64];
__attribute__((noinline)) static int fill(int n) {
	for (int i = 0; i < 64; i++)
		table[i] = mix(i, n);
	return table[n & 63];
}
__attribute__((noinline)) int fb(int n) { return fill(n) + fold(n & 15); }
