// fp.c is compiled with -fno-omit-frame-pointer: its functions push a frame
// record (arm64 UNWIND_ARM64_MODE_FRAME, x86_64 UNWIND_X86_64_MODE_RBP_FRAME).
long leaf_asm(long);
long nofp_caller(long);
long nofp_big(long);
long cleanup_user(long);

// caller calls the hand-written frameless leaf.
__attribute__((noinline)) long caller(long n) {
	long s = leaf_asm(n);
	return s + 1;
}

// saver keeps values in callee-saved registers across calls, so its frame
// saves register pairs (arm64) or registers below RBP (x86_64).
__attribute__((noinline)) long saver(long a, long b, long c, long d, long e) {
	long x = caller(a);
	long y = caller(x + b);
	long z = caller(y + c);
	long w = caller(z + d);
	return a * b + c * d + e * x + y * z + w + a + b + c + d + e;
}

int main(void) {
	long r = caller(3);
	r += saver(r, 2, 3, 4, 5);
	r += nofp_caller(r);
	r += nofp_big(r);
	r += cleanup_user(r);
	return (int)r;
}
