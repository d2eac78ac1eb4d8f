#include "common.h"
extern void sink(int);
__attribute__((noinline)) int fa(int n) { return fold(n) + mix(n, 3); }
__attribute__((noinline)) int fa_split(int n) {
	if (__builtin_expect(n < -1000, 0)) {
		for (int i = 0; i < 3; i++)
			sink(fold(i - n));
		return -1;
	}
	return fold(n + 1);
}
int unused_a(int n) { return n * 7 + fold(n); }
