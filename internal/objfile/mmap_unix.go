//go:build unix

package objfile

import (
	"os"
	"syscall"
)

func mmap(file *os.File, n int) ([]byte, error) {
	b, err := syscall.Mmap(int(file.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: file.Name(), Err: err}
	}
	return b, nil
}

func munmap(b []byte) error { return syscall.Munmap(b) }
