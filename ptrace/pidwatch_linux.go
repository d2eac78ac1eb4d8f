//go:build linux && (amd64 || arm64)

package ptrace

// PIDWatch tells whether the system created a process or thread since it was
// last asked, from the last PID the kernel allocated (/proc/loadavg), which
// every new process and thread advances. record drains kernel samples up to a
// second apart only while it reports nothing new: a new thread or child
// process is then found at the next drain, 100 ms later at most, rather than
// up to a second. A PIDWatch is not safe for concurrent use.
type PIDWatch struct {
	buf  [128]byte // /proc/loadavg, read into
	last int       // the last PID allocated at the previous call; 0 none
}

// Settled reports whether the kernel allocated no PID since the previous
// call. The first call, and any call that cannot read the PID, report
// false: what cannot be known is taken to have changed.
func (w *PIDWatch) Settled() bool {
	pid := readLastPID(w.buf[:])
	settled := pid > 0 && pid == w.last
	w.last = pid
	return settled
}
