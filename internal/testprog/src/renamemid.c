/* renamemid: a test target whose busy threads rename themselves while
 * they run, as a thread pool renames a worker for each job.
 *
 * Thread "rm-a" burns 200 ms of its own CPU time, renames itself "rm-a2"
 * with prctl(PR_SET_NAME) and burns 1000 ms more; thread b names itself
 * "rm-b" with prctl and at once "rm-b2" with pthread_setname_np, its first
 * acts, and burns 1600 ms. The main thread waits for both, idle.
 *
 * Usage: renamemid
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>

static volatile unsigned long sink;

static double thread_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void burn(double ms) {
	double end = thread_ms() + ms;
	while (thread_ms() < end)
		for (int i = 0; i < 10000; i++)
			sink += i;
}

static void *thread_a(void *arg) {
	(void)arg;
	prctl(PR_SET_NAME, "rm-a", 0, 0, 0);
	burn(200);
	prctl(PR_SET_NAME, "rm-a2", 0, 0, 0);
	burn(1000);
	return NULL;
}

static void *thread_b(void *arg) {
	(void)arg;
	prctl(PR_SET_NAME, "rm-b", 0, 0, 0);
	pthread_setname_np(pthread_self(), "rm-b2");
	burn(1600);
	return NULL;
}

int main(void) {
	pthread_t a, b;
	if (pthread_create(&a, NULL, thread_a, NULL) != 0 || pthread_create(&b, NULL, thread_b, NULL) != 0) {
		perror("pthread_create");
		return 1;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
