// tail.c is linked last. ld64.lld-14 leaves the last function of the image
// out of __unwind_info's range, so this keeps the functions under test
// away from the end.
long fixture_tail(long n) { return n * 3; }
