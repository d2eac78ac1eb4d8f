/* A signal handler interrupting a known stack: main -> outer -> spinner,
   a leaf spinning until the handler (handler -> inhandler) has run. */
#include <signal.h>
#include <sys/time.h>

static volatile int done;
volatile long x;

__attribute__((noinline)) void inhandler(void) { done = 1; }
__attribute__((noinline)) void handler(int s) { inhandler(); x += s; }
__attribute__((noinline)) void spinner(void) { while (!done) x++; }
__attribute__((noinline)) void outer(void) { spinner(); x++; }

int main(void) {
	struct sigaction sa = {0};
	sa.sa_handler = handler;
	sigaction(SIGALRM, &sa, 0);
	struct itimerval it = {{0, 0}, {0, 20000}};
	setitimer(ITIMER_REAL, &it, 0);
	outer();
	return 0;
}
