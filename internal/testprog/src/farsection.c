/* far_away is in a section of its own, which the linker places (with
 * -Wl,--section-start=farcode=...) in a second executable segment. */
__attribute__((noinline, section("farcode"))) int far_away(int x) { return x * 7 + 1; }
int main(int argc, char **argv) { return far_away(argc); }
