package symcache

import (
	"debug/elf"
	"debug/macho"
	"fmt"
	"sync"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/objfile"
)

// lazyLines is a LineSource read on first use: building a Table reads only
// symbols (the goal is 30 ms per 100k symbols), and the line tables of an
// object (a Go pclntab, DWARF) are read from its file only when a frame of
// it needs a line. It lives as long as its Table, so the Cache's bound on
// tables (Options.MaxTables) bounds line tables too.
type lazyLines struct {
	once sync.Once
	load func() (LineSource, error)
	src  LineSource
	err  error
	// dwarf marks a source read from DWARF, not from a Go line table.
	dwarf bool
}

func newLazyLines(load func() (LineSource, error)) *lazyLines {
	return &lazyLines{load: load}
}

// newLazyDWARF is newLazyLines for a source read from DWARF.
func newLazyDWARF(load func() (LineSource, error)) *lazyLines {
	return &lazyLines{load: load, dwarf: true}
}

// readsDWARF reports whether src reads DWARF (Options.NoDWARFLines leaves
// those out) rather than a Go line table.
func readsDWARF(src LineSource) bool {
	switch s := src.(type) {
	case *lazyLines:
		return s.dwarf
	case *DWARFLines:
		return true
	}
	return false
}

// lineLoadTimeout bounds how long the first lookup waits for an object's
// line tables: the file is reopened then, and a file served by a hung FUSE
// mount or disk must not hang symbolization (as DefaultLoadTimeout does
// for tables). Past it the object's frames have no lines.
var lineLoadTimeout = DefaultLoadTimeout

// source loads the line source on first use.
func (l *lazyLines) source() LineSource {
	l.once.Do(func() {
		type result struct {
			src LineSource
			err error
		}
		done := make(chan result, 1)
		load := l.load
		l.load = nil
		go func() {
			src, err := load()
			done <- result{src, err}
		}()
		timer := time.NewTimer(lineLoadTimeout)
		defer timer.Stop()
		select {
		case r := <-done:
			l.src, l.err = r.src, r.err
		case <-timer.C:
			l.err = fmt.Errorf("symcache: reading line tables took longer than %v", lineLoadTimeout)
		}
	})
	return l.src
}

// Lines implements LineSource.
func (l *lazyLines) Lines(addr uint64) []Frame {
	if s := l.source(); s != nil {
		return s.Lines(addr)
	}
	return nil
}

// Err returns why the line source could not be read, once it was tried.
func (l *lazyLines) Err() error {
	l.source()
	return l.err
}

// elfLines returns the lazy LineSource of an ELF object: the pclntab of a
// Go binary (isGo; goFunc is go:func.* from .symtab, or 0), else the DWARF
// of the file open opens. It returns nil when the object has neither.
func elfLines(object string, open func() (*elf.File, func() error, error), isGo bool, goFunc uint64, hasDWARF bool) LineSource {
	switch {
	case isGo:
		return newLazyLines(func() (LineSource, error) {
			f, closeFile, err := open()
			if err != nil {
				return nil, err
			}
			defer closeFile()
			t, err := elfGoLines(object, f, goFunc)
			if err != nil {
				return nil, err
			}
			return t, nil
		})
	case hasDWARF:
		return newLazyDWARF(func() (LineSource, error) {
			f, closeFile, err := open()
			if err != nil {
				return nil, err
			}
			defer closeFile()
			d, info, err := elfDWARF(f)
			if err != nil {
				return nil, fmt.Errorf("symcache: %s: %w", object, err)
			}
			return newDWARFLines(d, info, false)
		})
	}
	return nil
}

// machOFileLines returns the lazy LineSource of a Mach-O image from its
// file (path, the slice with UUID uuid): the pclntab of a Go binary
// (unless dwarfOnly), else the DWARF in the file itself (a __DWARF
// segment, as Go's linker writes). isGo and hasDWARF say what the image's
// header shows.
func machOFileLines(path, uuid string, isGo, hasDWARF, dwarfOnly bool) LineSource {
	if !(isGo && !dwarfOnly) && !hasDWARF {
		return nil
	}
	if !isGo || dwarfOnly {
		return newLazyDWARF(machOFileLoad(path, uuid, isGo, hasDWARF, dwarfOnly))
	}
	return newLazyLines(machOFileLoad(path, uuid, isGo, hasDWARF, dwarfOnly))
}

// machOFileLoad returns machOFileLines' loader.
func machOFileLoad(path, uuid string, isGo, hasDWARF, dwarfOnly bool) func() (LineSource, error) {
	return func() (LineSource, error) {
		f, err := images.OpenMachOUUID(path, uuid)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if isGo && !dwarfOnly {
			if t, err := machOGoLines(f.MachO, f.R, f.Size); err == nil {
				return t, nil
			} else if !hasDWARF {
				return nil, err
			}
		}
		mf, err := macho.NewFile(f.DWARFReader())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		d, err := mf.DWARF()
		if err != nil {
			return nil, fmt.Errorf("%s: __DWARF: %w", path, err)
		}
		return newDWARFLines(d, nil, true)
	}
}

// machOMappedGoLines is machOFileLines for a Go binary whose image lies in
// a mapping of its file (path, with UUID uuid): its __gopclntab is read
// there, in place; where that fails and the image has DWARF, its file is
// read as machOFileLines reads it.
func machOMappedGoLines(path string, m *images.MachO, image machOBytes, hasDWARF bool, uuid string) LineSource {
	return newLazyLines(func() (_ LineSource, err error) {
		defer objfile.RecoverFault(&err, objfile.PanicOnFault())
		t, err := machOGoLines(m, image, int64(len(image)))
		if err == nil {
			return t, nil
		}
		if !hasDWARF {
			return nil, err
		}
		return machOFileLoad(path, uuid, false, true, true)()
	})
}

// machOHasDWARF reports whether the image carries DWARF sections itself.
func machOHasDWARF(m *images.MachO) bool {
	for i := range m.Sections {
		if n := m.Sections[i].Name; n == "__debug_info" || n == "__zdebug_info" {
			return true
		}
	}
	return false
}
