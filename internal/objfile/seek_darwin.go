package objfile

import (
	"errors"
	"syscall"
)

// lseek's whence values for holes (macOS <sys/unistd.h>: SEEK_HOLE 3,
// SEEK_DATA 4, the reverse of Linux's).
const (
	seekData = 4
	seekHole = 3
)

// isNoData reports whether err is lseek's "no data past the offset".
func isNoData(err error) bool { return errors.Is(err, syscall.ENXIO) }
