// libtwo.c: a second dylib, laid out with libdemo in one synthetic dyld
// shared cache (images and symcache tests): its string pool is shared.
volatile int two_sink;
static __attribute__((noinline)) int two_local_a(int x) { two_sink = x; return x * 3; }
static __attribute__((noinline)) int two_local_b(int x) { two_sink = x; return two_local_a(x) + 5; }
__attribute__((noinline)) int two_entry(int x) { return two_local_a(x) + two_local_b(x + 1); }
