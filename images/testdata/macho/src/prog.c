// prog.c: the C fixture for the Mach-O tests (see ../../build.sh).
// Many small functions so that thousands of instruction addresses can be
// compared with llvm-symbolizer; static and inline functions for local
// symbols and DWARF inlined frames; Swift- and Rust-mangled names through
// asm labels, since no Swift or Rust toolchain is installed here.

volatile int sink;

static inline __attribute__((always_inline)) int mix(int a, int b) {
	int r = a;
	for (int i = 0; i < b; i++)
		r = r * 31 + i;
	return r;
}

static __attribute__((noinline)) int leaf(int x) {
	sink = x;
	return mix(x, sink & 7) + 1;
}

#define F(n)                                                   \
	__attribute__((noinline)) int func_##n(int x) {            \
		int s = 0;                                             \
		for (int i = 0; i < x; i++)                            \
			s += leaf(i ^ n) * (n + 1);                        \
		return s + mix(x, n & 3);                              \
	}                                                          \
	static __attribute__((noinline)) int local_##n(int x) {    \
		return func_##n(x + n) - leaf(x);                      \
	}

#define F10(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7) F(n##8) F(n##9)
F10(1) F10(2) F10(3) F10(4) F10(5) F10(6) F10(7) F10(8) F10(9)

int swift_greet(int) __asm__("_$s4main5greetyySiF");
int swift_greet(int a) { return leaf(a) + 1; }
int rust_example(int) __asm__("__RNvCs15kBYyAo9fc_7mycrate7example");
int rust_example(int a) { return leaf(a) + 2; }

#define C(n) t += local_##n(t);
#define C10(n) C(n##0) C(n##1) C(n##2) C(n##3) C(n##4) C(n##5) C(n##6) C(n##7) C(n##8) C(n##9)

int main(void) {
	int t = sink;
	C10(1) C10(2) C10(3) C10(4) C10(5) C10(6) C10(7) C10(8) C10(9)
	return t + swift_greet(t) + rust_example(t);
}
