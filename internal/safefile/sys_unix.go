//go:build unix

package safefile

import (
	"io/fs"
	"syscall"
)

// Open flags that the callers of this package add to their own opens.
const (
	// NoFollow refuses a symbolic link as the last component.
	NoFollow = syscall.O_NOFOLLOW
	// NonBlock opens a FIFO or device without waiting for its other end.
	NonBlock = syscall.O_NONBLOCK
	// noCTTY keeps a terminal opened as an output from becoming ours.
	noCTTY = syscall.O_NOCTTY
)

// errNoReader is the error of a non-blocking open of a FIFO no one reads.
var errNoReader error = syscall.ENXIO

// ownerOf returns the owner of the file st describes.
func ownerOf(st fs.FileInfo) (uid, gid int, ok bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(sys.Uid), int(sys.Gid), true
}
