/* Top-level assembly adds code with unwind information but no symbol: a
 * fully stripped build has more .eh_frame FDEs than its debug file has
 * function symbols, as glibc has. */
static int __attribute__((noinline)) helper(int x) { return x * 3 + 1; }
int main(int argc, char **argv) { (void)argv; return helper(argc); }
#define NOSYM ".cfi_startproc\n nop\n ret\n .cfi_endproc\n"
__asm__(".text\n" NOSYM NOSYM NOSYM NOSYM NOSYM NOSYM NOSYM NOSYM NOSYM NOSYM
	NOSYM NOSYM NOSYM NOSYM NOSYM NOSYM NOSYM NOSYM NOSYM NOSYM);
