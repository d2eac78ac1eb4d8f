#include <stdlib.h>
int fa(int), fa_split(int), fb(int), fd(int), fe(int);
int asm_add(int, int);
#ifdef __x86_64__
int norange_fn(int, int), gap_fn(int, int);
#else
#define norange_fn(a, b) 0
#define gap_fn(a, b) 0
#endif
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 5;
	return (fa(n) + fa_split(n) + fb(n) + fd(n) + fe(n) + asm_add(n, 2) + norange_fn(n, 3) + gap_fn(n, 4)) & 1;
}
