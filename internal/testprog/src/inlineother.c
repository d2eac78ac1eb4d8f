/* For symcache's DWARF tests, built with gcc -O2 -g: worker inlines
 * sum_sq, which inlines sq, and other inlines sq too. */
#include <stdio.h>
#include <stdlib.h>

static inline int sq(int x) { return x * x; }

static inline int sum_sq(int n) {
	int s = 0;
	for (int i = 0; i < n; i++)
		s += sq(i) ^ (s >> 3);
	return s;
}

__attribute__((noinline)) int worker(int n) {
	int t = 0;
	for (int k = 0; k < n; k++)
		t += sum_sq(k + n);
	return t;
}

__attribute__((noinline)) int other(int n) { return worker(n) * 3 + sq(n); }

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 7;
	printf("%d\n", other(n));
	return 0;
}
