// lib.c: the dylib fixture.
volatile int lib_sink;
static __attribute__((noinline)) int lib_helper(int x) { lib_sink = x; return x * 7; }
__attribute__((noinline)) int lib_entry(int x) { return lib_helper(x) + lib_helper(x + 1); }
__attribute__((noinline)) int lib_other(int x) { int s = 0; for (int i = 0; i < x; i++) s += lib_entry(i); return s; }
