//go:build unix

package symbolize

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// moreWaitMS is how long more waits for a writer that has just filled
// the buffer to write on: a program writing its addresses at once is
// woken by the read that emptied the pipe.
const moreWaitMS = 10

// more reports whether r, when a file of the OS (a pipe or a regular
// file), has more to read within moreWaitMS, or its end: reading it then
// does not wait for a writer that waits for the answers.
func more(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	ready := false
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, moreWaitMS)
			if err == unix.EINTR {
				continue
			}
			ready = err == nil && n > 0 && fds[0].Revents&(unix.POLLIN|unix.POLLHUP) != 0
			return
		}
	})
	return ready
}
