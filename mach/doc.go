// Package mach is the darwin backend: a target.Target that attaches to a
// task by PID, launches a command suspended, or samples the calling
// process's other threads, through cgo-free Mach and libSystem calls.
// Everything but the system calls is portable Go that calls the kernel
// through the Kernel interface, so that it runs on every OS: on darwin the
// trampolines implement Kernel, and on Linux mach/machtest, a model of xnu,
// drives the same logic in the tests; docs/DARWIN.md says what is verified
// where.
package mach
