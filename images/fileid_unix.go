//go:build unix

package images

import (
	"os"
	"syscall"
)

// fileID returns the device and inode of an open file.
func fileID(f *os.File) (dev, ino uint64, ok bool) {
	st, err := f.Stat()
	if err != nil {
		return 0, 0, false
	}
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(s.Dev), uint64(s.Ino), true
}
