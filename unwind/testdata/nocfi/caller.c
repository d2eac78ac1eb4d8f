/* caller keeps no frame pointer (-fomit-frame-pointer) and a frame of its
   own, so that a frame-pointer walk from jitlike loses it and what
   follows; main calls it. */
long jitlike(volatile long *p, long n);

__attribute__((noinline)) long caller(long n) {
	volatile long buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	return jitlike(buf, n) + buf[3];
}

int main(int argc, char **argv) {
	(void)argv;
	return (int)caller(argc + 1000) & 1;
}
