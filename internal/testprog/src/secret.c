/* swapself.c with its spinning function named so that a profile naming it
 * shows that the profiler read this file for another program's code. */
#define SPIN TOP_SECRET_root_only_symbol
#include "swapself.c"
