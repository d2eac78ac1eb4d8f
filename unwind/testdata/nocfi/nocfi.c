/* jitlike stands for JIT code: it keeps a frame record but has no CFI
   (built with -fno-asynchronous-unwind-tables -fno-unwind-tables
   -fno-omit-frame-pointer); its caller, in caller.c, has CFI but no frame
   pointer. */
__attribute__((noinline)) long jitlike(volatile long *p, long n) {
	long s = 0;
	for (long i = 0; i < n; i++)
		s += p[i & 7] * i;
	return s;
}
