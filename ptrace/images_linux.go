//go:build linux && (amd64 || arm64)

package ptrace

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/safefile"
	"github.com/macprof/macprof/target"
)

// The target's memory map: the executable images Images returns (cached,
// with build IDs read once per file), and the mapping that bounds a stack.

// stackBounds returns the bounds of the mapping that holds sp, re-reading
// the memory map once if the cached one has no such mapping.
func (t *Target) stackBounds(sp uint64) (lo, hi uint64, ok bool) {
	if lo, hi, ok = t.regions.StackBounds(sp); ok {
		return lo, hi, true
	}
	if err := t.readRegions(); err != nil {
		return 0, 0, false
	}
	return t.regions.StackBounds(sp)
}

// readRegions re-reads the memory map that stackBounds looks in.
func (t *Target) readRegions() error {
	regs, err := readRegions(t.pid)
	if err != nil {
		return err
	}
	t.regions = regs
	return nil
}

// readRegions reads /proc/PID/maps.
func readRegions(pid int) (images.Regions, error) {
	f, err := openRawFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, fmt.Errorf("read memory map of PID %d: %w", pid, err)
	}
	defer f.Close()
	regs, err := images.ParseProcMaps(f)
	if err != nil {
		return nil, fmt.Errorf("read memory map of PID %d: %w", pid, err)
	}
	return regs, nil
}

// images re-reads the memory map and returns the executable file mappings.
// The caller holds imgMu.
func (t *Target) images() (*images.Set, error) {
	regions, err := readRegions(t.pid)
	if err != nil {
		if _, serr := os.Stat(fmt.Sprintf("/proc/%d", t.pid)); serr != nil {
			return nil, target.ErrExited
		}
		return nil, err
	}
	if p := t.persist; p != nil {
		p.imgRegions = regions
	}
	var sig []images.Region
	for _, r := range regions {
		if r.Executable() && r.Path != "" {
			sig = append(sig, r)
		}
	}
	if len(sig) == 0 {
		// A live process has at least its executable mapped; an empty map
		// is a process tearing down its address space.
		return nil, target.ErrExited
	}
	if t.imgSet != nil && sameRegions(sig, t.imgSig) {
		return t.imgSet, nil
	}
	imgs := regions.ELFImages()
	root := fmt.Sprintf("/proc/%d/root", t.pid)
	pending := false
	for _, im := range imgs {
		if im.Path == "[vdso]" {
			im.Memory = vdsoMemory(im, &lockedReader{t: t})
			continue
		}
		im.OpenPath = root + im.Path
		im.MapFile = fmt.Sprintf("/proc/%d/map_files/%x-%x", t.pid, im.Start, im.Limit)
		// By file, not path: another file mapped from the same path
		// since has its own build ID.
		key := fmt.Sprintf("%s\x00%x:%d", im.OpenPath, im.Dev, im.Inode)
		id, ok := t.buildIDs[key]
		if !ok {
			if id, ok = t.readBuildID(im); ok {
				t.buildIDs[key] = id
			} else {
				pending = true
			}
		}
		im.BuildID = id
	}
	t.imgSig, t.imgSet = sig, images.NewSet(imgs)
	t.tables.update(t.imgSet)
	if pending {
		t.imgSig = nil // rebuilt at the next call, with what has come in
	}
	return t.imgSet, nil
}

// buildIDReads reads build IDs off the caller's goroutine, at most
// buildIDsPerTarget of one target's files at once.
var buildIDReads = safefile.Later[string]{MaxPerGroup: buildIDsPerTarget}

const (
	// buildIDWait is how long Images waits for a file's build ID before it
	// goes on without (the sampler calls it); a read still running is
	// picked up by a later call.
	buildIDWait = 20 * time.Millisecond
	// buildIDsPerTarget bounds one target's reads not yet returned: each
	// may be stuck on a file the target serves for ever.
	buildIDsPerTarget = 4
)

// readBuildID reads the build ID of the file im maps (through
// /proc/PID/map_files, so that a file deleted and replaced by a FIFO or
// another file at its path still gives the mapped file's ID; else at its
// path, if the file there is the mapped one); ok is false when the read
// has not finished within buildIDWait.
func (t *Target) readBuildID(im *images.Image) (id string, ok bool) {
	c := *im
	return buildIDReads.Get(strconv.Itoa(t.pid), im.MapFile, buildIDWait, func() string {
		id, _ := images.MappedELFBuildID(&c)
		return id
	})
}

// startTablesMax is how many objects a process may map for startTables to
// start building all their tables.
const startTablesMax = 8

// startTables starts building the unwind tables of every object set maps,
// without waiting for them, where there are at most startTablesMax: in a
// small process most of them are on some thread's stack, and a snapshot
// builds them while it attaches and stops the threads rather than after
// the stop (WalkCopies waits for them). A process that maps more is left
// to build the tables its walks meet, as is an object whose build finds
// cfi's concurrent builds all taken.
func startTables(set *images.Set) {
	imgs := set.Images()
	if len(imgs) > startTablesMax {
		return
	}
	// A resolver of its own: a Resolver is for one goroutine at a time,
	// and a lookup that does not wait starts a build without becoming
	// its waiter.
	r := tablesResolver(set).NoWait()
	for _, im := range imgs {
		r.Rule(im.Start)
	}
}

func sameRegions(a, b []images.Region) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lockedReader reads target memory from any goroutine.
type lockedReader struct{ t *Target }

func (r *lockedReader) ReadMemory(addr uint64, dst []byte) error { return r.t.ReadMemory(addr, dst) }
