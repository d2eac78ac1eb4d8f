/* namedthreads: a test target whose threads and child processes name
 * themselves with prctl(PR_SET_NAME), as a thread pool or a server's
 * workers do, burn CPU and exit.
 *
 * The main thread names itself "nt-main" and prints "ready"; then KIDS
 * child processes are forked, each named "nt-kid<i>" with one thread
 * "nt-kidw<i>" besides, and THREADS threads named "nt-w<i>" start; each
 * of these burns MS milliseconds of its own CPU time (a renamed thread
 * after 1.1 s idle) and exits, and the main thread waits for all of them.
 *
 * Usage: namedthreads THREADS KIDS MS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static double ms;

static double thread_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void named_burn(void) {
	double end = thread_ms() + ms;
	while (thread_ms() < end)
		for (int i = 0; i < 10000; i++)
			sink += i;
}

static void *worker(void *arg) {
	prctl(PR_SET_NAME, (char *)arg, 0, 0, 0);
	/* Idle for longer than a profiler that reads a thread's name at most
	 * once a second needs to read the new one before any sample. */
	usleep(1100 * 1000);
	named_burn();
	return NULL;
}

static pthread_t start(const char *prefix, int i) {
	char *name = malloc(16);
	snprintf(name, 16, "%s%d", prefix, i);
	pthread_t th;
	if (pthread_create(&th, NULL, worker, name) != 0) {
		perror("pthread_create");
		exit(1);
	}
	return th;
}

int main(int argc, char **argv) {
	if (argc != 4) {
		fprintf(stderr, "usage: namedthreads THREADS KIDS MS\n");
		return 2;
	}
	int threads = atoi(argv[1]), kids = atoi(argv[2]);
	ms = atof(argv[3]);
	if (threads < 0 || threads > 64 || kids < 0 || kids > 64 || ms <= 0) {
		fprintf(stderr, "namedthreads: bad arguments\n");
		return 2;
	}
	prctl(PR_SET_NAME, "nt-main", 0, 0, 0);
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; i < kids; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			char name[16];
			snprintf(name, sizeof name, "nt-kid%d", i);
			prctl(PR_SET_NAME, name, 0, 0, 0);
			pthread_t th = start("nt-kidw", i);
			named_burn();
			pthread_join(th, NULL);
			_exit(0);
		}
	}
	pthread_t *ts = calloc(threads + 1, sizeof *ts);
	for (int i = 0; i < threads; i++)
		ts[i] = start("nt-w", i);
	for (int i = 0; i < threads; i++)
		pthread_join(ts[i], NULL);
	while (wait(NULL) > 0)
		;
	return 0;
}
