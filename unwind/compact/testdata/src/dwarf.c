/* main and dcaller keep frame pointers (compact RBP-frame / frame
   entries; main uses dcaller's result, so that it calls it rather than
   jumping to it); odd, in dwarf_<arch>.s, has a DWARF-mode entry. */
long odd(long);
__attribute__((noinline)) long dcaller(long n) { return odd(n) + 1; }
int main(void) { return (int)dcaller(3) ^ 5; }
