// eh.c is compiled with -fexceptions: the cleanup gives cleanup_user a
// personality routine and an LSDA, which __unwind_info indexes.
long leaf_asm(long);

// No libgcc here (-nostdlib): a stand-in personality routine for the link.
int __gcc_personality_v0(void) { return 0; }
void _Unwind_Resume(void *e) { (void)e; for (;;) {} }

volatile long cleanups;

static void done(long *p) { cleanups += *p; }

__attribute__((noinline)) long cleanup_user(long n) {
	long guard __attribute__((cleanup(done))) = n;
	guard = leaf_asm(guard);
	return guard + leaf_asm(n);
}
