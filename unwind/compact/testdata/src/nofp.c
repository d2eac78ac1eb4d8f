// nofp.c is compiled with -fomit-frame-pointer: on x86_64 its functions are
// frameless (UNWIND_X86_64_MODE_STACK_IMMD, and _IND for the large frame).
long leaf_asm(long);
void sink(volatile char *);

__attribute__((noinline)) long nofp_caller(long n) {
	long a = leaf_asm(n);
	long b = leaf_asm(a);
	return a * b + n;
}

// nofp_big has a frame too large for an immediate encoding (over 2040
// bytes) but under a page, so it needs no stack probe.
__attribute__((noinline)) long nofp_big(long n) {
	volatile char buf[3000];
	for (int i = 0; i < 3000; i += 100)
		buf[i] = (char)(n + i);
	sink(buf);
	return buf[n & 1023] + leaf_asm(n);
}

__attribute__((noinline)) void sink(volatile char *p) { p[1] = p[0]; }
