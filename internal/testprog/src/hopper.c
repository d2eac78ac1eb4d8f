// hopper: spends its first CPU time in libc's qsort (msort keeps no frame
// pointers), then in libraries it dlopens one after another (argv[3..]),
// each for LIB_SECONDS, so that a profiler's samples land in code mapped
// after it read the memory map, one library after another.
// Usage: hopper SORT_SECONDS LIB_SECONDS LIB...
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b) {
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return (x > y) - (x < y);
}

static void sort_for(double seconds) {
	enum { N = 1 << 16 };
	static unsigned v[N];
	double until = cpu_now() + seconds;
	unsigned s = 1;
	while (cpu_now() < until) {
		for (int i = 0; i < N; i++)
			v[i] = s = s * 1103515245 + 12345;
		qsort(v, N, sizeof v[0], cmp);
	}
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: hopper SORT_SECONDS LIB_SECONDS LIB...\n");
		return 2;
	}
	sort_for(atof(argv[1]));
	for (int i = 3; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "hopper: %s\n", dlerror());
			return 1;
		}
		// Each library names its function after its file: libNAME.so.
		const char *base = strrchr(argv[i], '/');
		char name[64];
		snprintf(name, sizeof name, "%.*s", (int)strcspn(base ? base + 4 : argv[i], "."), base ? base + 4 : argv[i]);
		unsigned long (*hop)(double) = (unsigned long (*)(double))dlsym(h, name);
		if (!hop) {
			fprintf(stderr, "hopper: %s: no %s\n", argv[i], name);
			return 1;
		}
		printf("%s %lu\n", name, hop(atof(argv[2])));
	}
	return 0;
}
