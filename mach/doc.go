// Package mach is the darwin backend of macprof: cgo-free bindings to the
// Mach and libSystem calls a sampling profiler needs, and a target.Target
// that attaches to a task by PID, launches a command suspended, or samples
// the other threads of the calling process (Self).
//
// The package is split so that everything that is not a system call is
// portable and tested on every OS: the C struct layouts the kernel fills
// (layout.go, asserted against Apple's headers in layout_test.go), the
// decoding of thread state into unwind.Regs, the kern_return_t table and
// the advice attached to each error (kern.go), the choice of register
// flavor and the PAC mask (arch.go), and the bounds of each bulk stack copy
// (stack.go). The files ending in _darwin.go and _darwin_{arm64,amd64}.s
// hold only the calls into libSystem (x/sys/unix-style trampolines, no cgo)
// and the Target that strings them together.
//
// Nothing in the darwin files can be run on Linux. docs/DARWIN.md says what
// is verified where.
package mach
