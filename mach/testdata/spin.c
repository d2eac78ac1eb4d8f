// spin: the target of the darwin integration tests (mach/target_darwin_test.go).
// Its main thread is named "macprof-spin" and burns CPU in
// macprof_spin_leaf <- macprof_spin_middle <- main; a second thread,
// "macprof-idle", sleeps. "spin exit N" exits with status N at once.
// Built by the test with: cc -O0 -g -fno-omit-frame-pointer -o spin spin.c
#include <pthread.h>
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
	macprof_spin_middle();
	return 0;
}
