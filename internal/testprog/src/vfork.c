// vfork.c: on SIGUSR1, its main thread calls vfork and so enters an
// uninterruptible wait until its child execs or exits; the child stops
// itself first, so the wait lasts until the child is continued or killed.
// The process then exits 0. Tests use it for a thread that sleeps
// uninterruptibly for as long as they want.
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t go;

static void on_usr1(int sig) { (void)sig; go = 1; }

int main(void) {
	signal(SIGUSR1, on_usr1);
	printf("ready\n");
	fflush(stdout);
	while (!go)
		usleep(1000);
	pid_t child = vfork();
	if (child == 0) {
		kill(getpid(), SIGSTOP);
		_exit(0);
	}
	int status;
	waitpid(child, &status, 0);
	return 0;
}
