// Package mach is the darwin backend: a target.Target that attaches to a
// task by PID, launches a command suspended, or samples the calling
// process's other threads, through cgo-free Mach and libSystem calls.
// Everything but the system calls (struct layouts, error advice, register
// flavors, stack bounds) is in portable files, so that it is tested on
// every OS; docs/DARWIN.md says what is verified where.
package mach
