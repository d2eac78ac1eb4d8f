//go:build linux && (amd64 || arm64)

package ptrace

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// processVMPages returns the size of process pid's address space in pages,
// the first field of /proc/PID/statm, or 0 when it cannot be read (a
// zombie's is 0 too). Images reads it, with raw system calls and no
// allocation, before re-reading the memory map: a library mapped since
// the last read grows it, and the map, longer to read and parse by two
// orders of magnitude, is re-read only then.
func processVMPages(pid int) uint64 {
	var path [40]byte
	p := append(path[:0], "/proc/"...)
	p = strconv.AppendInt(p, int64(pid), 10)
	p = append(p, "/statm\x00"...)
	var buf [64]byte
	n, err := readFileRaw(p, buf[:])
	if err != nil {
		return 0
	}
	return parseVMPages(buf[:n])
}

// parseVMPages reads the first field of a statm line.
func parseVMPages(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + uint64(c-'0')
	}
	return v
}

// vmPagesFile reads processVMPages through one descriptor of
// /proc/PID/statm, opened at the first read and read again from its start
// at each (as the threads' stat files are): Images reads it at every tick,
// and the open of a /proc file, its path looked up and checked, cost
// several times the read (about a third of each tick's /proc work in a
// 99 Hz recording of bench/cbusy). The descriptor follows the process
// (struct pid), not the number: once the process has died it reads
// nothing, where the path could name a process that took the number since.
// The caller holds imgMu.
type vmPagesFile struct {
	fd     int
	opened bool // fd is open
	closed bool // close was called: reads go through the path
}

// pages returns what processVMPages(pid) returns.
func (f *vmPagesFile) pages(pid int) uint64 {
	if f.closed {
		return processVMPages(pid)
	}
	if !f.opened {
		var path [40]byte
		p := append(path[:0], "/proc/"...)
		p = strconv.AppendInt(p, int64(pid), 10)
		p = append(p, "/statm\x00"...)
		fd, err := openRaw(p, unix.O_RDONLY|unix.O_CLOEXEC)
		if err != nil {
			return 0
		}
		f.fd, f.opened = fd, true
	}
	var buf [64]byte
	n, err := preadRaw(f.fd, buf[:])
	if err != nil {
		return 0
	}
	return parseVMPages(buf[:n])
}

// close closes the descriptor; later reads open the path each time.
func (f *vmPagesFile) close() {
	if f.opened {
		closeRaw(f.fd)
	}
	f.opened, f.closed = false, true
}
