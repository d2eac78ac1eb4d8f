// Package safefile opens, reads and writes files at paths that other users
// may control (a target's mapped files, a config, a spool, an output),
// without blocking on what is there, following what was planted there, or
// reading without bound.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// ErrNotRegular is returned for a path that names a FIFO, device, socket or
// directory where a regular file is needed.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned when a file or a read is over its size limit.
var ErrTooLarge = errors.New("over the size limit")

// ErrTimeout is returned when a read did not finish by its deadline.
var ErrTimeout = errors.New("did not finish in time")

// Open opens the regular file at path for reading; a FIFO, device or
// socket there is refused without being opened, so that nothing blocks on
// it or triggers a driver. A symbolic link is followed.
func Open(path string) (*os.File, error) { return open(path, false) }

// notRegular builds the error for a path whose file is not regular.
func notRegular(path string, m fs.FileMode) error {
	return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (a %s)", ErrNotRegular, kindOf(m))}
}

// kindOf names a file's type for messages.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}

// ReadFile reads the regular file at path (as Open does; with noFollow,
// refusing a symbolic link as the last component), refusing one of more
// than limit bytes.
func ReadFile(path string, limit int64, noFollow bool) ([]byte, error) {
	f, err := open(path, noFollow)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadOpened(f, limit)
}

// ReadOpened reads all of f, which must be a regular file of at most limit
// bytes (also when it grows while it is read).
func ReadOpened(f *os.File, limit int64) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(f.Name(), st.Mode())
	}
	if st.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: f.Name(), Err: fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, st.Size(), limit)}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	if int64(len(b)) > limit {
		return nil, &fs.PathError{Op: "read", Path: f.Name(), Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)}
	}
	return b, nil
}

// Budget returns a ReaderAt over r that reads at most n bytes in all, so
// that a parser following sizes from a hostile header (a huge sparse file
// reads as zeros for ever) stops at n.
func Budget(r io.ReaderAt, n int64) io.ReaderAt {
	b := &budget{r: r}
	b.left.Store(n)
	return b
}

type budget struct {
	r    io.ReaderAt
	left atomic.Int64
}

func (b *budget) ReadAt(p []byte, off int64) (int, error) {
	if b.left.Add(-int64(len(p))) < 0 {
		return 0, fmt.Errorf("read of %d bytes at %d: %w", len(p), off, ErrTooLarge)
	}
	return b.r.ReadAt(p, off)
}

// Later runs calls that may be slow (a read from a hung disk or a FUSE
// file a target serves) on goroutines of their own, one per key, so that
// the caller never waits longer than it chose; a result that comes in
// after is kept for the next Get of its key.
type Later[T any] struct {
	// MaxPerGroup bounds the calls of one group (one target) not yet
	// collected; a Get beyond it starts nothing and reports the result as
	// not there yet, so that one target's stuck files cost a bounded number
	// of goroutines and leave other targets' reads alone.
	MaxPerGroup int
	// MaxAge is how long a result is kept for its Get (default a minute):
	// one older belongs to a caller that is gone (a target that exited,
	// whose PID and key may come again), so it is dropped.
	MaxAge time.Duration

	mu      sync.Mutex
	running map[string]*laterCall[T]
	groups  map[string]int
}

type laterCall[T any] struct {
	group  string
	done   chan struct{}
	doneAt time.Time // set before done is closed
	v      T
}

// finished reports whether c has its result.
func (c *laterCall[T]) finished() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Get returns fn's result for key (in group): of the call already running
// for key, or of a new one, waiting at most wait. ok is false when the
// result is not there by then; the call runs on, and a later Get returns
// its result once (then forgets it, as the caller keeps it).
func (l *Later[T]) Get(group, key string, wait time.Duration, fn func() T) (v T, ok bool) {
	l.mu.Lock()
	c := l.running[key]
	if c == nil || c.finished() && l.stale(c) {
		l.dropStale()
		if l.MaxPerGroup > 0 && l.groups[group] >= l.MaxPerGroup {
			l.mu.Unlock()
			return v, false
		}
		if l.running == nil {
			l.running, l.groups = make(map[string]*laterCall[T]), make(map[string]int)
		}
		c = &laterCall[T]{group: group, done: make(chan struct{})}
		l.running[key] = c
		l.groups[group]++
		go func() {
			c.v = fn()
			c.doneAt = time.Now()
			close(c.done)
		}()
	}
	l.mu.Unlock()
	if wait > 0 && !c.finished() {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-c.done:
		case <-t.C:
		}
	}
	if !c.finished() {
		return v, false
	}
	l.mu.Lock()
	if l.running[key] == c {
		l.forget(key, c)
	}
	l.mu.Unlock()
	return c.v, true
}

// stale reports whether finished call c has waited for its Get too long.
// The caller holds mu.
func (l *Later[T]) stale(c *laterCall[T]) bool {
	age := l.MaxAge
	if age <= 0 {
		age = time.Minute
	}
	return time.Since(c.doneAt) > age
}

// dropStale forgets every stale result. The caller holds mu.
func (l *Later[T]) dropStale() {
	for key, c := range l.running {
		if c.finished() && l.stale(c) {
			l.forget(key, c)
		}
	}
}

// forget removes the call c of key. The caller holds mu.
func (l *Later[T]) forget(key string, c *laterCall[T]) {
	delete(l.running, key)
	if l.groups[c.group]--; l.groups[c.group] <= 0 {
		delete(l.groups, c.group)
	}
}

// Running returns how many calls have not been collected by a Get.
func (l *Later[T]) Running() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.running)
}
