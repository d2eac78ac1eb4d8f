//go:build linux && (amd64 || arm64)

package ptrace

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strconv"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/unwind/cfi"
	"golang.org/x/sys/unix"
)

// The image sets of the processes process rings sample, as they were at
// each sample (versions): the kernel writes into the rings, in time order
// on each CPU, a record of every process the command's tree forks, every
// exec (a comm record marked as such) and every executable mapping, each
// with its time, as perf record reads them. A sample is symbolized and its
// chain checked against the version of its process at its time: a command
// that execs another program, a child that execs, a library mapped or
// replaced while the command runs.

// imageVersion is one process's executable mappings from one event on.
type imageVersion struct {
	pid  int
	imgs []*images.Image
	exe  string
	// set and res are built when a sample first needs them.
	set *images.Set
	res *cfi.Resolver
}

// versionAt is the version a process's samples from time on belong to.
type versionAt struct {
	time uint64
	ver  int32
}

// procEvent is a record of a fork, exec or executable mapping, kept until
// the collect sorts them by time.
type procEvent struct {
	time     uint64
	kind     uint32 // PERF_RECORD_FORK, PERF_RECORD_COMM (an exec), PERF_RECORD_MMAP2
	pid, arg int    // arg: the parent of a fork
	img      *images.Image
}

// maxVersions bounds the versions process rings keep: a command that maps
// code without end has its later mappings folded into its last version.
const maxVersions = 4096

// maxEvents bounds the events one collect keeps.
const maxEvents = 1 << 16

// imageHistory is the versions of every process of the command's tree.
type imageHistory struct {
	versions []*imageVersion
	timeline map[int][]versionAt // by PID, oldest first
	events   []procEvent
	// vdso: the versions' resolvers have the vDSO's table, for walks of
	// stack copies (rings that take callchains check them: vdsoTableUse).
	vdso bool
}

// setBase makes set, the images of process pid read before it ran (exe
// its executable), its first version, unless it has one.
func (h *imageHistory) setBase(pid int, set *images.Set, exe string) {
	if len(h.versions) > 0 || set == nil {
		return
	}
	h.versions = append(h.versions, &imageVersion{pid: pid, imgs: set.Images(), exe: exe, set: set})
	if h.timeline == nil {
		h.timeline = map[int][]versionAt{}
	}
	h.timeline[pid] = []versionAt{{0, 0}}
}

// at returns the version of pid's images at time, or -1 if none is known.
func (h *imageHistory) at(pid int, time uint64) int32 {
	tl := h.timeline[pid]
	i, _ := slices.BinarySearchFunc(tl, time, func(v versionAt, t uint64) int {
		if v.time <= t {
			return -1
		}
		return 1
	})
	if i == 0 {
		return -1
	}
	return tl[i-1].ver
}

// note keeps the event rec (a record of sample type TID|TIME with
// sample_id_all, whose last 8 bytes are its time) if it is a fork of a
// process, an exec or an executable mapping.
func (h *imageHistory) note(rec []byte) {
	le := binary.LittleEndian
	if len(rec) < 8+8+16 || len(h.events) >= maxEvents {
		return
	}
	typ, misc := le.Uint32(rec), le.Uint16(rec[4:])
	pid := int(le.Uint32(rec[8:]))
	time := le.Uint64(rec[len(rec)-8:])
	switch typ {
	case unix.PERF_RECORD_FORK:
		// pid, ppid, tid, ptid, time: a new process when pid != ppid.
		if len(rec) < 32 {
			return
		}
		if ppid := int(le.Uint32(rec[12:])); ppid != pid {
			h.events = append(h.events, procEvent{time: le.Uint64(rec[24:]), kind: typ, pid: pid, arg: ppid})
		}
	case unix.PERF_RECORD_COMM:
		if misc&unix.PERF_RECORD_MISC_COMM_EXEC != 0 {
			h.events = append(h.events, procEvent{time: time, kind: typ, pid: pid})
		}
	case unix.PERF_RECORD_MMAP2:
		if im := mmap2Image(rec); im != nil {
			h.events = append(h.events, procEvent{time: time, kind: typ, pid: pid, img: im})
		}
	}
}

// mmap2Image returns the image an MMAP2 record (with a 16-byte sample_id
// after its file name) maps, or nil for a mapping that is not executable or
// of no file.
func mmap2Image(rec []byte) *images.Image {
	le := binary.LittleEndian
	const nameAt = 72
	if len(rec) < nameAt+16 {
		return nil
	}
	if le.Uint32(rec[64:])&unix.PROT_EXEC == 0 {
		return nil
	}
	name := rec[nameAt : len(rec)-16]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	start, size, off := le.Uint64(rec[16:]), le.Uint64(rec[24:]), le.Uint64(rec[32:])
	if len(name) == 0 || size == 0 || start+size < start {
		return nil
	}
	if name[0] != '/' && string(name) != "[vdso]" {
		return nil // anonymous code, [uprobes]: no file to read
	}
	im := &images.Image{Path: string(name), Format: images.FormatELF, Start: start, Limit: start + size, Offset: off}
	if le.Uint16(rec[4:])&unix.PERF_RECORD_MISC_MMAP_BUILD_ID != 0 {
		if n := int(rec[40]); n > 0 && n <= 20 {
			im.BuildID = hex.EncodeToString(rec[44 : 44+n])
		}
	} else {
		// maj, min, ino: what Image.Open checks a file at the path by.
		im.Dev = uint64(unix.Mkdev(le.Uint32(rec[40:]), le.Uint32(rec[44:])))
		im.Inode = le.Uint64(rec[48:])
	}
	return im
}

// apply sorts the events kept since the last call by time and makes the
// versions they start: a forked process starts with its parent's version
// at the fork, an exec with no images, a mapping adds its image to its
// process's images (replacing those it overlaps). A [vdso] image is read
// from the profiler's copy (vdsoMemory), else by vdso, when set, in process
// base.
func (h *imageHistory) apply(base int, vdso images.MemoryReader) {
	if len(h.events) == 0 {
		return
	}
	if h.timeline == nil {
		h.timeline = map[int][]versionAt{}
	}
	slices.SortStableFunc(h.events, func(a, b procEvent) int { return cmp.Compare(a.time, b.time) })
	fresh := len(h.versions) // versions from here on were made by this call
	for _, e := range h.events {
		full := len(h.versions) >= maxVersions
		switch e.kind {
		case unix.PERF_RECORD_FORK:
			if v := h.at(e.arg, e.time); v >= 0 {
				h.timeline[e.pid] = append(h.timeline[e.pid], versionAt{e.time, v})
			}
		case unix.PERF_RECORD_COMM:
			if !full {
				h.add(e.pid, e.time, &imageVersion{pid: e.pid})
			}
		case unix.PERF_RECORD_MMAP2:
			im := e.img
			if im.Path == "[vdso]" {
				// Any process's, read from the profiler's copy; another
				// ABI's vDSO only in process base, from its memory.
				var fallback images.MemoryReader
				if e.pid == base {
					fallback = vdso
				}
				if im.Memory = vdsoMemory(im, fallback); im.Memory == nil {
					continue
				}
			} else {
				// The mapped file while the mapping lasts (Open checks
				// it is still this one).
				im.MapFile = "/proc/" + strconv.Itoa(e.pid) + "/map_files/" + strconv.FormatUint(im.Start, 16) + "-" + strconv.FormatUint(im.Limit, 16)
			}
			v := h.at(e.pid, e.time)
			if v >= int32(fresh) && h.versions[v].pid == e.pid && !overlaps(h.versions[v].imgs, im) || full && v >= 0 {
				// A mapping beside those of a version this call made
				// (a loader mapping a program's libraries one after
				// another), or past maxVersions: the version takes it.
				// No sample has built its set yet, and a superset of
				// the mappings names the same addresses the same.
				iv := h.versions[v]
				iv.imgs, iv.set, iv.res = append(iv.imgs, im), nil, nil
				if iv.exe == "" && im.Path[0] == '/' {
					iv.exe = im.Path
				}
				continue
			}
			if full {
				continue
			}
			nv := &imageVersion{pid: e.pid}
			if v >= 0 {
				old := h.versions[v]
				nv.exe = old.exe
				for _, o := range old.imgs {
					if o.Limit <= im.Start || o.Start >= im.Limit {
						nv.imgs = append(nv.imgs, o)
					}
				}
			}
			if nv.exe == "" && im.Path[0] == '/' {
				// The first file an exec maps is its executable.
				nv.exe = im.Path
			}
			nv.imgs = append(nv.imgs, im)
			h.add(e.pid, e.time, nv)
		}
	}
	clear(h.events)
	h.events = h.events[:0]
}

// overlaps reports whether im overlaps an image of imgs.
func overlaps(imgs []*images.Image, im *images.Image) bool {
	for _, o := range imgs {
		if o.Start < im.Limit && im.Start < o.Limit {
			return true
		}
	}
	return false
}

// add makes v pid's version from time on.
func (h *imageHistory) add(pid int, time uint64, v *imageVersion) {
	h.versions = append(h.versions, v)
	h.timeline[pid] = append(h.timeline[pid], versionAt{time, int32(len(h.versions) - 1)})
}

// images returns version v's image set and unwind-table resolver, building
// them on first use.
func (h *imageHistory) images(v int32) (*images.Set, *cfi.Resolver) {
	iv := h.versions[v]
	if iv.set == nil {
		iv.set = images.NewSet(iv.imgs)
	}
	if iv.res == nil {
		iv.res = resolverOf(iv.set, h.vdso)
	}
	return iv.set, iv.res
}

// setBase makes set, read before the command ran (exe tells its
// executable), the first version of its images, once; rings that copy
// stacks walk them with the vDSO's table.
func (p *processRings) setBase(set *images.Set, exe func() string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hist.vdso = p.stack > 0
	if len(p.hist.versions) == 0 {
		p.hist.setBase(p.pid, set, exe())
	}
}
