//go:build linux && (amd64 || arm64)

package ptrace

import (
	"encoding/binary"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/target"
	"golang.org/x/sys/unix"
)

// sampleID appends the sample_id of process rings' records (pid, tid,
// time) to rec and sets its size.
func sampleID(rec []byte, pid uint32, time uint64) []byte {
	le := binary.LittleEndian
	rec = le.AppendUint32(rec, pid)
	rec = le.AppendUint32(rec, pid)
	rec = le.AppendUint64(rec, time)
	le.PutUint16(rec[6:], uint16(len(rec)))
	return rec
}

// mmap2Record is the kernel's record of an executable mapping of path at
// [start, start+size) by pid at time, with a build ID.
func mmap2Record(time uint64, pid uint32, start, size uint64, path string) []byte {
	le := binary.LittleEndian
	rec := make([]byte, 72)
	le.PutUint32(rec[0:], unix.PERF_RECORD_MMAP2)
	le.PutUint16(rec[4:], unix.PERF_RECORD_MISC_MMAP_BUILD_ID)
	le.PutUint32(rec[8:], pid)
	le.PutUint32(rec[12:], pid)
	le.PutUint64(rec[16:], start)
	le.PutUint64(rec[24:], size)
	rec[40] = 2 // a build ID of two bytes
	rec[44], rec[45] = 0xab, 0xcd
	le.PutUint32(rec[64:], unix.PROT_READ|unix.PROT_EXEC)
	name := append([]byte(path), 0)
	for len(name)%8 != 0 {
		name = append(name, 0)
	}
	return sampleID(append(rec, name...), pid, time)
}

// execRecord is the kernel's comm record of pid's exec at time.
func execRecord(time uint64, pid uint32) []byte {
	le := binary.LittleEndian
	rec := make([]byte, 16, 48)
	le.PutUint32(rec[0:], unix.PERF_RECORD_COMM)
	le.PutUint16(rec[4:], unix.PERF_RECORD_MISC_COMM_EXEC)
	le.PutUint32(rec[8:], pid)
	le.PutUint32(rec[12:], pid)
	rec = append(rec, "new\x00\x00\x00\x00\x00"...)
	return sampleID(rec, pid, time)
}

// forkRecord is the kernel's record of process pid forked by ppid at time.
func forkRecord(time uint64, pid, ppid uint32) []byte {
	le := binary.LittleEndian
	rec := make([]byte, 32)
	le.PutUint32(rec[0:], unix.PERF_RECORD_FORK)
	le.PutUint32(rec[8:], pid)
	le.PutUint32(rec[12:], ppid)
	le.PutUint32(rec[16:], pid)
	le.PutUint32(rec[20:], ppid)
	le.PutUint64(rec[24:], time)
	return sampleID(rec, pid, time)
}

// TestProcessRingsVersionImages: each sample gets the images its process
// had at its time, whichever CPU's ring holds it: the command's first
// images before its exec, the new program's after (its records come on
// another CPU than some of the samples); a child forked before the exec
// keeps the old images, its own library included once it mapped it; a
// child's samples carry its PID.
func TestProcessRingsVersionImages(t *testing.T) {
	r0, r1 := fakeRing(4096), fakeRing(4096)
	p := newFakeProcessRings(100, r0, r1)
	old := &images.Image{Path: "/bin/old", Format: images.FormatELF, Start: 0x400000, Limit: 0x500000}
	p.setBase(images.NewSet([]*images.Image{old}), func() string { return "/bin/old" })

	r0.write(processRecordAt(10, 100, 100, 0x401000))
	r0.write(forkRecord(15, 200, 100))
	r1.write(processRecordAt(20, 100, 101, 0x402000))
	r0.write(mmap2Record(25, 200, 0x7f0000, 0x1000, "/lib/child.so"))
	r0.write(execRecord(30, 100))
	r0.write(mmap2Record(31, 100, 0x400000, 0x200000, "/bin/new"))
	r1.write(processRecordAt(40, 100, 100, 0x401000)) // after the exec, on the other CPU
	r1.write(processRecordAt(22, 200, 200, 0x401000)) // the child, before its mapping
	r0.write(processRecordAt(50, 200, 200, 0x7f0010)) // the child, after it
	p.collect()

	caps := []*target.Capture{target.NewCapture(8, 0), target.NewCapture(8, 0), target.NewCapture(8, 0)}
	lookup := func(c *target.Capture) string {
		if c.Images == nil {
			return "no images"
		}
		im := c.Images.Lookup(c.PCs[0])
		if im == nil {
			return "no image"
		}
		return im.Path
	}
	if n := p.take(100, caps); n != 2 {
		t.Fatalf("thread 100: %d samples, want 2", n)
	}
	if got := lookup(caps[0]); got != "/bin/old" || caps[0].Executable != "/bin/old" {
		t.Errorf("the command before its exec: %s (executable %q), want /bin/old", got, caps[0].Executable)
	}
	if got := lookup(caps[1]); got != "/bin/new" || caps[1].Executable != "/bin/new" {
		t.Errorf("the command after its exec: %s (executable %q), want /bin/new", got, caps[1].Executable)
	}
	if im := caps[1].Images.Lookup(0x401000); im == nil || im.BuildID != "abcd" {
		t.Errorf("the new program's image %v: want the build ID its record gave (abcd)", im)
	}
	if n := p.take(101, caps); n != 1 || lookup(caps[0]) != "/bin/old" {
		t.Errorf("thread 101 before the exec: %d samples, %s, want 1 in /bin/old", n, lookup(caps[0]))
	}
	if n := p.take(200, caps); n != 2 {
		t.Fatalf("child 200: %d samples, want 2", n)
	}
	// Each CPU's oldest first: the order between CPUs is not kept.
	for _, c := range caps[:2] {
		want := "/bin/old" // its parent's at the fork
		if c.PCs[0] == 0x7f0010 {
			want = "/lib/child.so"
			if im := c.Images.Lookup(0x401000); im == nil || im.Path != "/bin/old" {
				t.Errorf("the child after its mapping lost its parent's images: %v", im)
			}
		}
		if c.PID != 200 || lookup(c) != want {
			t.Errorf("the child's sample at %#x: PID %d, %s; want 200, %s", c.PCs[0], c.PID, lookup(c), want)
		}
	}
}
