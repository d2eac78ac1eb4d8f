// Package ptrace is the Linux backend: a target.Target built on ptrace(2),
// process_vm_readv(2) and /proc.
//
// Every ptrace request for a tracee must come from the OS thread that
// attached it, so a Target runs all of its work on one goroutine locked to
// its OS thread and the public methods send it requests. Threads are attached
// with PTRACE_SEIZE (no SIGSTOP is ever injected, so a profiler that dies
// leaves nothing pending: the kernel detaches its tracees and they run on),
// new threads are followed with PTRACE_O_TRACECLONE, and every ptrace-stop the
// target reports between captures (signals, new threads, exec) is serviced
// as soon as SIGCHLD says it happened.
//
// The package builds only on Linux; on other systems it is empty.
package ptrace
