/* renamer: a test target whose busy threads are renamed while they run.
 *
 * THREADS threads (argv[1]) spin, each named "rn-w<i>". On SIGUSR1 each
 * renames itself "rn-self<i>" with prctl(PR_SET_NAME), as a thread pool
 * names its workers; on SIGUSR2 the main thread renames each "rn-main<i>"
 * with pthread_setname_np, which writes /proc/self/task/TID/comm (the
 * kernel's comm record then goes to the main thread's events, not the
 * worker's). It prints "ready" once every thread spins.
 *
 * Usage: renamer THREADS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

static volatile sig_atomic_t self_gen, main_gen;
static volatile int started;
static volatile unsigned long sink;

static void on_usr1(int sig) { (void)sig; self_gen++; }
static void on_usr2(int sig) { (void)sig; main_gen++; }

__attribute__((noinline)) static void *worker(void *arg) {
	long i = (long)arg;
	char name[16];
	snprintf(name, sizeof name, "rn-w%ld", i);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	__sync_fetch_and_add(&started, 1);
	int seen = 0;
	for (;;) {
		for (int j = 0; j < 100000; j++)
			sink += j;
		if (self_gen != seen) {
			seen = self_gen;
			snprintf(name, sizeof name, "rn-self%ld", i);
			prctl(PR_SET_NAME, name, 0, 0, 0);
		}
	}
	return NULL;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 2;
	if (n < 1 || n > 64) {
		fprintf(stderr, "renamer: bad thread count\n");
		return 2;
	}
	/* The workers inherit the mask: only the main thread takes the
	 * signals, so that no worker is interrupted to run a handler. */
	sigset_t both, none;
	sigemptyset(&both);
	sigaddset(&both, SIGUSR1);
	sigaddset(&both, SIGUSR2);
	sigprocmask(SIG_BLOCK, &both, &none);
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, on_usr2);
	pthread_t *ts = calloc(n, sizeof *ts);
	for (long i = 0; i < n; i++)
		pthread_create(&ts[i], NULL, worker, (void *)i);
	while (started < n)
		usleep(1000);
	printf("ready\n");
	fflush(stdout);
	int seen = 0;
	for (;;) {
		sigsuspend(&none);
		if (main_gen != seen) {
			seen = main_gen;
			for (int i = 0; i < n; i++) {
				char name[16];
				snprintf(name, sizeof name, "rn-main%d", i);
				pthread_setname_np(ts[i], name);
			}
		}
	}
}
