//go:build linux && (amd64 || arm64)

package ptrace

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// watchRing calls wake, from a goroutine of its own, each time the kernel
// finds r half full: without a watermark asked for, the kernel sets the
// wake-up mark of a ring at half its data area (ring_buffer_init in
// kernel/events/ring_buffer.c: rb->watermark = max_size / 2) and signals
// the event's file as readable when its records pass it. The goroutine
// waits in the Go runtime's poller, on a duplicate of the event's file, so
// it holds no thread and costs no wake-up of its own. stop ends it and
// returns once it no longer reads the ring, which may then be unmapped.
func watchRing(r *perfRing, wake func()) (stop func(), err error) {
	fd, err := unix.FcntlInt(uintptr(r.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("watch a sample ring: %w", err)
	}
	// Non-blocking, so that os.NewFile hands it to the poller. (The flag
	// is the open file's, shared with r.fd, which is never read.)
	if err := unix.SetNonblock(fd, true); err != nil {
		closeFD(fd)
		return nil, fmt.Errorf("watch a sample ring: %w", err)
	}
	f := os.NewFile(uintptr(fd), "perf_event ring")
	// A file the poller does not hold has no deadlines: then the ring
	// is drained as often as what it holds needs.
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		f.Close()
		return nil, fmt.Errorf("watch a sample ring: %w", err)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("watch a sample ring: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Returns when f is closed. The file is also readable when
		// its thread exits, which asks for no drain of its own.
		rc.Read(func(uintptr) bool {
			if r.halfFull() {
				wake()
			}
			return false
		})
	}()
	return func() {
		f.Close()
		<-done
	}, nil
}

// halfFull reports whether the records the kernel wrote and the sampler
// has not consumed fill half of the ring or more.
func (r *perfRing) halfFull() bool {
	head := atomic.LoadUint64(&r.meta.Data_head)
	return head-atomic.LoadUint64(&r.meta.Data_tail) >= uint64(len(r.data)/2)
}
