//go:build linux && (amd64 || arm64)

package ptrace

import (
	"io"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawFile is a file read through raw system calls, for /proc files the
// sampler re-reads while it samples (a process's memory map, once a
// second): a regular system call wakes the runtime's sysmon from its deep
// sleep, which then polls every 20 µs for as long as the sampler's tick
// keeps a P busy. Reading a /proc file does not block for long.
type rawFile struct{ fd int }

// openRawFile opens path read-only.
func openRawFile(path string) (rawFile, error) {
	p := make([]byte, len(path)+1)
	copy(p, path)
	fd, err := openRaw(p, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		return rawFile{fd: -1}, err
	}
	return rawFile{fd: fd}, nil
}

// Read is read(2) as a raw system call; it returns io.EOF at the end.
func (f rawFile) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(f.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch {
		case e == unix.EINTR:
			continue
		case e != 0:
			return 0, e
		case r == 0:
			return 0, io.EOF
		}
		return int(r), nil
	}
}

// Close closes the file.
func (f rawFile) Close() error {
	if f.fd < 0 {
		return nil
	}
	closeRaw(f.fd)
	return nil
}
