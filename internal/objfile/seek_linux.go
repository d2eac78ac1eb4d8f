package objfile

import (
	"errors"
	"syscall"
)

// lseek's whence values for holes (linux/fs.h).
const (
	seekData = 3
	seekHole = 4
)

// isNoData reports whether err is lseek's "no data past the offset".
func isNoData(err error) bool { return errors.Is(err, syscall.ENXIO) }
