/* forker: a test target that starts N child processes, at most PAR at a
 * time, each of which burns MS milliseconds of CPU in child_burn and
 * exits; the parent only waits. Its samples are all its children's.
 *
 * Usage: forker N MS PAR
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void child_burn(double ms) {
	double end = cpu_ms() + ms;
	while (cpu_ms() < end)
		for (int i = 0; i < 10000; i++)
			sink += i;
}

int main(int argc, char **argv) {
	if (argc != 4) {
		fprintf(stderr, "usage: forker N MS PAR\n");
		return 2;
	}
	int n = atoi(argv[1]), par = atoi(argv[3]);
	double ms = atof(argv[2]);
	if (n < 1 || par < 1 || ms <= 0) {
		fprintf(stderr, "forker: bad arguments\n");
		return 2;
	}
	int running = 0;
	for (int i = 0; i < n; i++) {
		if (running == par) {
			if (wait(NULL) > 0)
				running--;
		}
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			child_burn(ms);
			_exit(0);
		}
		running++;
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
