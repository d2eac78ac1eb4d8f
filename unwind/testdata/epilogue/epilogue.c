/* Functions whose GCC -O2 epilogues pop callee-saved registers, rbp among
   them, before they return: their unwind tables keep rbp's save rule after
   the pop. main keeps a frame pointer (a variable-length array), so that a
   walk that takes rbp wrongly finds main's frame wrong. */

volatile long sink;

__attribute__((noinline)) long mix(long a, long b)
{
	sink = a;
	return a * 31 + (b ^ (a >> 3));
}

/* Enough values live across calls that GCC keeps them in rbx, rbp and
   r12-r15 and pops each in its epilogue. */
__attribute__((noinline)) long pressure(const long *v, long n)
{
	long a = 1, b = 2, c = 3, d = 5, e = 7, f = 11;
	for (long i = 0; i < n; i++) {
		a = mix(a, v[i]);
		b = mix(b, a + c);
		c = mix(c, b ^ d);
		d = mix(d, c - e);
		e = mix(e, d + f);
		f = mix(f, e ^ a);
	}
	return a + b + c + d + e + f;
}

/* A frame pointer of its own (a variable-length array): it leaves with
   leave, after which its table still says rbp is saved. */
__attribute__((noinline)) long framed(long n)
{
	long buf[n];
	for (long i = 0; i < n; i++)
		buf[i] = i * 3 + n;
	return pressure(buf, n) + buf[n / 2];
}

int main(int argc, char **argv)
{
	(void)argv;
	long n = argc + 2;
	long keep[n];
	for (long i = 0; i < n; i++)
		keep[i] = i;
	sink = framed(n) + keep[argc];
	return 0;
}
