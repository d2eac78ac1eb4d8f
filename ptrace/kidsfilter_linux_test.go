//go:build linux && (amd64 || arm64)

package ptrace

import (
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"golang.org/x/sys/unix"
)

// TestDescendantRingsDropTheCommandsSamples launches a shell that burns CPU
// itself and then in a child, and reads its descendant rings once it ended:
// the child's samples are there, the shell's own are not (the kernel's
// filter dropped them before they were copied).
func TestDescendantRingsDropTheCommandsSamples(t *testing.T) {
	if fd, err := loadDropProcess(os.Getpid()); err != nil {
		t.Fatalf("the kernel filter cannot be loaded (needs CAP_BPF or root, a kernel with BPF, the initial PID namespace): %v", err)
	} else {
		closeFD(fd)
	}
	const burn = `x=0; while [ $x -lt 200000 ]; do x=$((x+1)); done`
	opts := target.Options{Continuous: true, Unwind: unwind.MethodAuto, Kernel: target.KernelSampling{Period: 10 * time.Millisecond, ProcessRings: true}}
	l := launchForTest(t, []string{"/bin/sh", "-c", burn + "; (" + burn + ")"}, opts)
	p := l.descendantRings()
	if p == nil || !p.filtered {
		t.Fatalf("descendant rings %v, filtered %v: want filtered descendant rings", p != nil, p != nil && p.filtered)
	}
	pid := l.PID()
	ended := testprog.PollEvery(60*time.Second, 20*time.Millisecond, func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		_, after, _ := strings.Cut(string(b), ") ")
		return strings.HasPrefix(after, "Z")
	})
	if !ended {
		t.Fatal("the shell did not end within 60 s")
	}
	own, kids := 0, 0
	p.mu.Lock()
	for _, r := range p.rings {
		r.begin()
		for {
			at, size, typ, ok := r.nextRecord()
			if !ok {
				break
			}
			if typ != unix.PERF_RECORD_SAMPLE || size < 16 {
				continue
			}
			var ids [4]byte
			r.readAt(ids[:], at+8)
			if int(binary.LittleEndian.Uint32(ids[:])) == pid {
				own++
			} else {
				kids++
			}
		}
	}
	p.mu.Unlock()
	t.Logf("samples in the descendant rings: %d of the shell, %d of its child", own, kids)
	if own != 0 || kids < 5 {
		t.Errorf("%d samples of the shell itself, %d of its child: want none, and the child's (at least 5)", own, kids)
	}
}
