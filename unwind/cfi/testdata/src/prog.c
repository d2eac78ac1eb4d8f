/* A freestanding test program for the CFI table: functions with and
   without frames, a large stack frame, a variadic call, recursion. */
volatile int sink;
int asmleaf(int n); /* leaf_<arch>.S: frameless hand-written assembly */

__attribute__((noinline)) int leaf(int n) {
	int s = 0;
	for (int i = 0; i < n; i++)
		s += i * i;
	return s;
}

__attribute__((noinline)) int bigframe(int n) {
	volatile char buf[5000];
	for (int i = 0; i < 5000; i++)
		buf[i] = (char)i;
	return buf[n % 5000] + leaf(n);
}

__attribute__((noinline)) int saves(int a, int b, int c, int d) {
	int x = leaf(a), y = leaf(b), z = leaf(c), w = leaf(d);
	sink = x;
	return x * y + z * w + asmleaf(a);
}

__attribute__((noinline)) int recurse(int n) {
	if (n <= 0)
		return asmleaf(n);
	return recurse(n - 1) + sink;
}

__attribute__((noinline)) int dynamic(int n) {
	volatile char *p = __builtin_alloca(n * 16 + 16);
	p[0] = 1;
	return p[0] + saves(n, n + 1, n + 2, n + 3);
}

int main(void) {
	return bigframe(3) + dynamic(4) + recurse(5);
}

void _start(void) {
	sink = main();
	for (;;)
		;
}
