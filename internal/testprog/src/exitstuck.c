/* exitstuck.c: a second thread enters the uninterruptible wait of a vfork
 * parent (its child sleeps argv[2] ms, default 1000, then exits) while the
 * main thread exits with status argv[1] after argv[3] ms (default 300): the
 * process ends while one of its threads is slow to stop. Tests use it for a
 * target that dies while a thread is still attached after a slow stop. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long child_ms = 1000;

static void *vforker(void *arg) {
	(void)arg;
	if (vfork() == 0) {
		struct timespec ts = {child_ms / 1000, (child_ms % 1000) * 1000000L};
		nanosleep(&ts, 0);
		_exit(0);
	}
	for (;;)
		pause();
}

int main(int argc, char **argv) {
	int status = argc > 1 ? atoi(argv[1]) : 0;
	long exit_ms = argc > 3 ? atol(argv[3]) : 300;
	if (argc > 2)
		child_ms = atol(argv[2]);
	pthread_t t;
	pthread_create(&t, 0, vforker, 0);
	usleep(exit_ms * 1000);
	exit(status);
}
