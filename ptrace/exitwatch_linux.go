//go:build linux && (amd64 || arm64)

package ptrace

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// WatchExit calls f once, on a goroutine of its own, when process pid exits
// (its pidfd becomes readable), so that a caller sleeping until a drain up
// to a second away learns of the exit at once. stop ends the watch without
// calling f, and waits for the goroutine to end. The goroutine sleeps in
// poll(2) and costs no wake-up until either happens.
func WatchExit(pid int, f func()) (stop func(), err error) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, fmt.Errorf("watch process %d for its exit: %w", pid, err)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		unix.Close(pidfd)
		return nil, fmt.Errorf("watch process %d for its exit: %w", pid, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer unix.Close(pidfd)
		defer unix.Close(p[0])
		fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}, {Fd: int32(p[0]), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(fds, -1)
			if err == unix.EINTR {
				continue
			}
			if err == nil && fds[1].Revents == 0 && fds[0].Revents != 0 {
				f()
			}
			return
		}
	}()
	return func() {
		unix.Write(p[1], []byte{0})
		<-done
		unix.Close(p[1])
	}, nil
}
