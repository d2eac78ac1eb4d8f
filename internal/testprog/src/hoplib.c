// hoplib: a library that hopper dlopens; built with -O2 and without frame
// pointers, several times under other names (-DHOP=name), so that its frames
// can be walked only through its own unwind tables.
#include <time.h>

#ifndef HOP
#define HOP hop
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define spin CAT(HOP, _spin) /* hopa_spin: each library's frames tell it apart */

static double cpu_now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long spin(int depth, double until, unsigned long acc) {
	if (depth > 0)
		return spin(depth - 1, until, acc * 31 + depth) + 1;
	while (cpu_now() < until)
		for (int i = 0; i < 1000; i++)
			acc = acc * 6364136223846793005UL + 1442695040888963407UL;
	return acc;
}

// HOP burns seconds of CPU time, five calls deep in spin (not a tail
// call, so that HOP's own frame is on the stack).
unsigned long HOP(double seconds) { return spin(4, cpu_now() + seconds, 1) ^ (unsigned long)seconds; }
