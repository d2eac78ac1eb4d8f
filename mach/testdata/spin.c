// spin: the target of the darwin integration tests (mach/target_darwin_test.go).
// Its main thread is named "macprof-spin" and burns CPU in
// macprof_spin_leaf <- macprof_spin_middle <- main; a second thread,
// "macprof-idle", sleeps. "spin exit N" exits with status N at once;
// "spin for S" spins S seconds and exits 0; "spin exec S PROG ARGS..."
// spins S seconds in macprof_spin_before_exec, then execs PROG.
// Built by the test with: cc -O0 -g -fno-omit-frame-pointer -o spin spin.c
#include <pthread.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile unsigned long macprof_sink;

__attribute__((noinline)) void macprof_spin_leaf(void) {
	for (int i = 0; i < 1000; i++) {
		macprof_sink += (unsigned long)i * 2654435761u;
	}
}

__attribute__((noinline)) void macprof_spin_middle(void) {
	for (;;) {
		macprof_spin_leaf();
	}
}

// spin_for burns CPU in macprof_spin_leaf for secs seconds.
static void spin_for(double secs) {
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 1000; i++) {
			macprof_spin_leaf();
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < secs);
}

__attribute__((noinline)) void macprof_spin_for(double secs) { spin_for(secs); }

__attribute__((noinline)) void macprof_spin_before_exec(double secs) { spin_for(secs); }

static void *idle(void *arg) {
	(void)arg;
	pthread_setname_np("macprof-idle");
	for (;;) {
		sleep(1);
	}
	return NULL;
}

int main(int argc, char **argv) {
	if (argc == 3 && strcmp(argv[1], "exit") == 0) {
		return atoi(argv[2]);
	}
	pthread_t t;
	pthread_create(&t, NULL, idle, NULL);
	pthread_setname_np("macprof-spin");
	if (argc == 3 && strcmp(argv[1], "for") == 0) {
		macprof_spin_for(atof(argv[2]));
		return 0;
	}
	if (argc >= 4 && strcmp(argv[1], "exec") == 0) {
		macprof_spin_before_exec(atof(argv[2]));
		execv(argv[3], argv + 3);
		return 127;
	}
	macprof_spin_middle();
	return 0;
}
