//go:build linux && (amd64 || arm64)

package ptrace

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/unwind/cfi"
)

// The vDSO, an ELF image the kernel maps into every process ([vdso]) with no
// file behind it, is read from the profiler's own copy: its bytes are the
// same in every process of the profiler's ABI during a boot (mapped at a
// random address), and the copy can be read after a target has exited, as a
// child often has by the time its samples are walked or symbolized. It gives
// a target's [vdso] its symbols (images.Image.Memory) and its unwind table
// (its .eh_frame, indexed by .eh_frame_hdr).

// maxVDSO bounds the profiler's vDSO read (a few pages).
const maxVDSO = 1 << 20

// vdsoTableKey and vdsoTablePath name the vDSO's unwind table in cfiTables:
// a key no file's ("id:", "path:") takes, a path no file has (NUL).
const (
	vdsoTableKey  = "vdso:"
	vdsoTablePath = "\x00[vdso]"
)

// ownVDSO is the profiler's [vdso], read once.
var ownVDSO = sync.OnceValues(func() ([]byte, error) { return readVDSO(os.Getpid()) })

// readVDSO reads the [vdso] mapping of process pid, at most its mapping's
// size and maxVDSO bytes.
func readVDSO(pid int) ([]byte, error) {
	regs, err := readRegions(pid)
	if err != nil {
		return nil, err
	}
	for _, r := range regs {
		if r.Path != "[vdso]" {
			continue
		}
		n := r.End - r.Start
		if r.End < r.Start || n > maxVDSO {
			return nil, fmt.Errorf("vdso of PID %d: mapping of %d bytes at %#x", pid, n, r.Start)
		}
		buf := make([]byte, n)
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/mem", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("vdso of PID %d: %w", pid, err)
		}
		defer unix.Close(fd)
		for done := 0; done < len(buf); {
			k, err := unix.Pread(fd, buf[done:], int64(r.Start)+int64(done))
			if err == unix.EINTR {
				continue
			}
			if err != nil || k <= 0 {
				return nil, fmt.Errorf("vdso of PID %d: read %d bytes at %#x: %v", pid, len(buf)-done, r.Start+uint64(done), err)
			}
			done += k
		}
		return buf, nil
	}
	return nil, fmt.Errorf("PID %d maps no vdso", pid)
}

// vdsoCopy reads a target's [vdso], mapped at start, from the profiler's
// copy.
type vdsoCopy struct {
	start uint64
	data  []byte
}

var errOutsideVDSO = errors.New("read outside the vdso")

// ReadMemory reads what the target has at addr: images.MemoryReader.
func (v vdsoCopy) ReadMemory(addr uint64, dst []byte) error {
	off := addr - v.start
	if addr < v.start || off > uint64(len(v.data)) || uint64(len(dst)) > uint64(len(v.data))-off {
		return fmt.Errorf("%d bytes at %#x: %w", len(dst), addr, errOutsideVDSO)
	}
	copy(dst, v.data[off:])
	return nil
}

// sameVDSO reports whether im, a [vdso] image, is the profiler's: a mapping
// of the same size (another ABI's vDSO, such as a 32-bit one, is not).
func sameVDSO(im *images.Image) bool {
	own, err := ownVDSO()
	return err == nil && im.Path == "[vdso]" && im.Offset == 0 && im.Limit-im.Start == uint64(len(own))
}

// vdsoMemory returns the reader of im, a [vdso] image, to give its Memory:
// the profiler's copy if it is the same vDSO, else fallback (nil: none).
func vdsoMemory(im *images.Image, fallback images.MemoryReader) images.MemoryReader {
	if !sameVDSO(im) {
		return fallback
	}
	own, _ := ownVDSO()
	return vdsoCopy{start: im.Start, data: own}
}

// loadTable builds the unwind table cfiTables is asked for: the vDSO's
// from the profiler's copy, else the object's at path.
func loadTable(path string) (*cfi.Table, error) {
	if path != vdsoTablePath {
		return cfi.Load(path)
	}
	own, err := ownVDSO()
	if err != nil {
		return nil, err
	}
	return vdsoTable(own)
}

// vdsoTable builds the unwind table of a vDSO image from its bytes.
func vdsoTable(data []byte) (*cfi.Table, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err == nil {
		err = objfile.CheckELF(f, int64(len(data)), int64(len(data)))
	}
	if err != nil {
		return nil, fmt.Errorf("vdso: %w", err)
	}
	t, err := cfi.FromELF(f)
	if err != nil {
		return nil, fmt.Errorf("vdso: %w", err)
	}
	return t, nil
}
