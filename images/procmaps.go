package images

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Region is one line of a Linux /proc/PID/maps file.
type Region struct {
	Start, End uint64
	Perms      string // e.g. "r-xp"
	Offset     uint64
	Dev        uint64 // the mapped file's device, as stat's st_dev (Linux's encoding)
	Inode      uint64
	Path       string // file path, or a pseudo name such as "[stack]", or ""
}

// Executable reports whether the region is mapped executable.
func (r Region) Executable() bool { return len(r.Perms) >= 3 && r.Perms[2] == 'x' }

// Regions is a target's memory map, sorted by address.
type Regions []Region

// maxMapsLines bounds how many lines ParseProcMaps accepts, so that a
// pathological map cannot make the profiler allocate without bound.
const maxMapsLines = 1 << 20

// ParseProcMaps parses the contents of /proc/PID/maps.
func ParseProcMaps(r io.Reader) (Regions, error) {
	var out Regions
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		if line > maxMapsLines {
			return out, fmt.Errorf("maps: more than %d lines", maxMapsLines)
		}
		reg, err := parseMapsLine(sc.Bytes())
		if err != nil {
			return out, fmt.Errorf("maps line %d: %w", line, err)
		}
		out = append(out, reg)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("maps: %w", err)
	}
	return out, nil
}

func parseMapsLine(b []byte) (Region, error) {
	// start-end perms offset dev inode [path]
	var r Region
	fields := make([][]byte, 0, 6)
	rest := b
	for i := 0; i < 5; i++ {
		rest = bytes.TrimLeft(rest, " ")
		j := bytes.IndexByte(rest, ' ')
		if j < 0 {
			j = len(rest)
		}
		fields = append(fields, rest[:j])
		rest = rest[j:]
	}
	if len(fields[4]) == 0 {
		return r, fmt.Errorf("too few fields in %q", b)
	}
	dash := bytes.IndexByte(fields[0], '-')
	if dash < 0 {
		return r, fmt.Errorf("bad address range %q", fields[0])
	}
	var err error
	if r.Start, err = strconv.ParseUint(string(fields[0][:dash]), 16, 64); err != nil {
		return r, fmt.Errorf("bad start address: %w", err)
	}
	if r.End, err = strconv.ParseUint(string(fields[0][dash+1:]), 16, 64); err != nil {
		return r, fmt.Errorf("bad end address: %w", err)
	}
	if r.End < r.Start {
		return r, fmt.Errorf("range end %#x before start %#x", r.End, r.Start)
	}
	r.Perms = string(fields[1])
	if r.Offset, err = strconv.ParseUint(string(fields[2]), 16, 64); err != nil {
		return r, fmt.Errorf("bad offset: %w", err)
	}
	if r.Dev, err = parseDev(fields[3]); err != nil {
		return r, err
	}
	if r.Inode, err = strconv.ParseUint(string(fields[4]), 10, 64); err != nil {
		return r, fmt.Errorf("bad inode: %w", err)
	}
	r.Path = strings.TrimLeft(string(rest), " ")
	return r, nil
}

// parseDev parses a maps device field, "major:minor" in hex, into the
// dev_t stat reports (glibc's makedev for Linux: the minor's low byte,
// the major's low 12 bits, the minor's high bits, the major's high bits).
func parseDev(b []byte) (uint64, error) {
	i := bytes.IndexByte(b, ':')
	if i < 0 {
		return 0, fmt.Errorf("bad device %q", b)
	}
	major, err := strconv.ParseUint(string(b[:i]), 16, 32)
	if err != nil {
		return 0, fmt.Errorf("bad device major: %w", err)
	}
	minor, err := strconv.ParseUint(string(b[i+1:]), 16, 32)
	if err != nil {
		return 0, fmt.Errorf("bad device minor: %w", err)
	}
	return minor&0xff | (major&0xfff)<<8 | (minor&^0xff)<<12 | (major&^0xfff)<<32, nil
}

// Find returns the region containing addr.
func (rs Regions) Find(addr uint64) (Region, bool) {
	lo, hi := 0, len(rs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if rs[m].Start <= addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo > 0 && addr < rs[lo-1].End {
		return rs[lo-1], true
	}
	return Region{}, false
}

// StackBounds returns the bounds of the memory region holding sp. That is
// where a thread's stack lives whatever its mapping is called: a [stack]
// line, an anonymous pthread stack, or a Go heap arena holding goroutine
// stacks. Regions are expected in ascending order, as the kernel prints
// them.
func (rs Regions) StackBounds(sp uint64) (lo, hi uint64, ok bool) {
	reg, ok := rs.Find(sp)
	if !ok {
		return 0, 0, false
	}
	return reg.Start, reg.End, true
}

// ELFImages returns the executable, file-backed regions as ELF images.
// Pseudo files ("[vdso]") are kept (the vDSO is a real ELF object in
// memory) but get no path to open; deleted files keep their name.
func (rs Regions) ELFImages() []*Image {
	var out []*Image
	for _, r := range rs {
		if !r.Executable() || r.Path == "" {
			continue
		}
		if strings.HasPrefix(r.Path, "[") && r.Path != "[vdso]" {
			continue
		}
		out = append(out, &Image{
			Path:   strings.TrimSuffix(r.Path, " (deleted)"),
			Format: FormatELF,
			Start:  r.Start,
			Limit:  r.End,
			Offset: r.Offset,
			Dev:    r.Dev,
			Inode:  r.Inode,
		})
	}
	return out
}
