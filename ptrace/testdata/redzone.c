/* A leaf that keeps its caller's stack pointer in the red zone, below SP,
 * as OpenSSL's AVX2 SHA-256 does through most of its loop: redzone_spin
 * realigns its stack, saves the SP it was called with in its frame (at
 * 88(%rsp)) and a copy at -8(%rsp), and its CFI computes the CFA from the
 * copy (DW_CFA_def_cfa_expression: DW_OP_breg7 -8; DW_OP_deref;
 * DW_OP_plus_uconst 8). A kernel stack copy starts at SP, so the copy is
 * out of it. Called from alpha, called from main; prints "ready" and
 * spins. x86-64 only. */

volatile unsigned long sink;
volatile int stop;

void redzone_spin(void);

__asm__(
    ".text\n"
    ".globl redzone_spin\n"
    ".type redzone_spin,@function\n"
    "redzone_spin:\n"
    ".cfi_startproc\n"
    "  mov %rsp, %rax\n"
    ".cfi_def_cfa_register %rax\n"
    "  push %rbx\n"
    ".cfi_offset %rbx, -16\n"
    "  sub $160, %rsp\n"
    "  and $-64, %rsp\n"
    "  mov %rax, 88(%rsp)\n"
    ".cfi_escape 0x0f,0x06,0x77,0xd8,0x00,0x06,0x23,0x08\n" /* CFA = [rsp+88]+8 */
    "  mov %rax, -8(%rsp)\n"
    ".cfi_escape 0x0f,0x05,0x77,0x78,0x06,0x23,0x08\n" /* CFA = [rsp-8]+8 */
    "1:\n"
    "  cmpl $0, stop(%rip)\n"
    "  jne 2f\n"
    "  incq sink(%rip)\n"
    "  jmp 1b\n"
    "2:\n"
    ".cfi_escape 0x0f,0x06,0x77,0xd8,0x00,0x06,0x23,0x08\n" /* CFA = [rsp+88]+8 */
    "  mov 88(%rsp), %rax\n"
    "  mov -8(%rax), %rbx\n"
    "  mov %rax, %rsp\n"
    ".cfi_def_cfa %rsp, 8\n"
    ".cfi_same_value %rbx\n"
    "  ret\n"
    ".cfi_endproc\n"
    ".size redzone_spin, .-redzone_spin\n");

#define LEAF redzone_spin
#include "calls_leaf.h"
