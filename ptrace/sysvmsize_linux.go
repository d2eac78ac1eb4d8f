//go:build linux && (amd64 || arm64)

package ptrace

import "strconv"

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
	var v uint64
	for _, c := range buf[:n] {
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + uint64(c-'0')
	}
	return v
}
