/* For symbolize's oracle tests, built with gcc -O2 -g: worker's loop
 * inlines sum_sq, which inlines sq. */
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

int main(int argc, char **argv) {
	printf("%d\n", worker(argc > 1 ? atoi(argv[1]) : 7));
	return 0;
}
