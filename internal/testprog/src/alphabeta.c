/* Two functions that are not inlined, beta calling alpha, for symbolize's
 * ELF test. */
volatile int v;
__attribute__((noinline)) int alpha(int x) { v = x; return x * 3 + v; }
__attribute__((noinline)) int beta(int x) { v = x; return alpha(x) + v * 7; }
int main(void) { return beta(v); }
