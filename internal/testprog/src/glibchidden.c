/* work is renamed with an asm label, as glibc's hidden_proto does for
 * calls from inside the library. */
int work(int x) __asm__("__GI_work");
int __attribute__((noinline)) work(int x) { return x * 5 + 2; }
int main(int argc, char **argv) { (void)argv; return work(argc); }
