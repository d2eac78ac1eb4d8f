package objfile

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
)

// A Mapping is a file mapped read-only, so that a parser reads its
// sections in place from the page cache instead of copying them into
// fresh heap memory (page faults and a copy that cost a one-off snapshot
// more than the parsing). A file truncated under the mapping faults
// (SIGBUS) where its pages are gone: every read of a Mapping's bytes runs
// with PanicOnFault set and RecoverFault deferred, which turn the fault
// into ErrFault.

// maxMapping bounds the files mapped: a larger one (no object file
// a profiler reads comes near) is read with pread.
const maxMapping = 4 << 30

// ErrFault is the error of a read of a mapping that faulted: the file
// shrank under it.
var ErrFault = errors.New("the mapped file changed under the read")

// Mapping is a file's bytes mapped read-only, counted against a budget as
// they are handed out.
type Mapping struct {
	data []byte
	left atomic.Int64 // bytes still to hand out
}

// Map maps the first size bytes of file read-only (size as DataSize
// gives it); budget bounds the bytes that Bytes hands out in all, as
// safefile.Budget bounds reads. It fails where the system cannot
// map files, for an empty file and over maxMapping bytes.
func Map(file *os.File, size, budget int64) (*Mapping, error) {
	if size <= 0 || size > maxMapping {
		return nil, fmt.Errorf("map %d bytes: %w", size, ErrBadSize)
	}
	b, err := mmap(file, int(size))
	if err != nil {
		return nil, err
	}
	m := &Mapping{data: b}
	m.left.Store(budget)
	return m, nil
}

// Close unmaps m; no slice of it may be read after.
func (m *Mapping) Close() error {
	if m == nil || m.data == nil {
		return nil
	}
	b := m.data
	m.data = nil
	return munmap(b)
}

// Bytes returns the n bytes at off, in place: valid until Close, and read
// only with PanicOnFault set (see RecoverFault).
func (m *Mapping) Bytes(off, n uint64) ([]byte, error) {
	if end := off + n; end < off || end > uint64(len(m.data)) {
		return nil, fmt.Errorf("%d bytes at %#x: past the end of the %d-byte mapping: %w", n, off, len(m.data), ErrBadSize)
	}
	if m.left.Add(-int64(n)) < 0 {
		return nil, fmt.Errorf("%d bytes at %#x: over the read budget: %w", n, off, ErrBadSize)
	}
	return m.data[off : off+n : off+n], nil
}

// PanicOnFault makes a fault of the calling goroutine (a read of a
// mapping whose file shrank) panic instead of crashing the program, and
// returns the previous setting for RecoverFault:
//
//	defer objfile.RecoverFault(&err, objfile.PanicOnFault())
func PanicOnFault() bool { return debug.SetPanicOnFault(true) }

// RecoverFault, deferred, restores the setting PanicOnFault returned and
// turns a panic of a fault into ErrFault in *err; any other panic goes on.
func RecoverFault(err *error, old bool) {
	debug.SetPanicOnFault(old)
	r := recover()
	if r == nil {
		return
	}
	// A fault at an address (not a nil dereference) is a runtime.Error
	// with an Addr method.
	if e, ok := r.(runtime.Error); ok {
		if a, ok := r.(interface{ Addr() uintptr }); ok {
			*err = fmt.Errorf("%w (fault at %#x: %v)", ErrFault, a.Addr(), e)
			return
		}
	}
	panic(r)
}
