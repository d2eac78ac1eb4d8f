package targettest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/macprof/macprof/target"
)

func TestFake(t *testing.T) {
	f := New(7, map[target.ThreadID]*Thread{
		3: {Name: "b", Stack: []uint64{1}, Stacks: 2, NoSampleEvery: 3},
		1: {Name: "a", Share: 1, Stack: []uint64{5, 6}, CFI: true},
		2: {InfoErr: target.ErrNoThread},
	})
	f.Stopped = time.Microsecond
	ids, err := f.Threads(nil)
	if err != nil || !slices.Equal(ids, []target.ThreadID{1, 2, 3}) {
		t.Errorf("Threads = %v, %v; want [1 2 3] in order", ids, err)
	}
	if info, err := f.Info(1); err != nil || !info.Running || info.Name != "a" {
		t.Errorf("Info(1) = %+v, %v", info, err)
	}
	if _, err := f.Info(2); !errors.Is(err, target.ErrNoThread) {
		t.Errorf("Info(2): %v, want its InfoErr", err)
	}
	c := target.NewCapture(8, 0)
	if err := f.Capture(1, c); err != nil || !slices.Equal(c.PCs, []uint64{5, 6}) || c.Walk.CFIFrames != 1 || c.Stopped != time.Microsecond {
		t.Errorf("Capture(1) = %+v, %v", c, err)
	}
	// Thread 3: captures 1 and 4 have no sample; the others cycle
	// through two stacks.
	var got []string
	for range 5 {
		if err := f.Capture(3, c); errors.Is(err, target.ErrNoSample) {
			got = append(got, "none")
		} else {
			got = append(got, string(rune('0'+c.PCs[1]-0x9000)))
		}
	}
	if want := []string{"none", "1", "0", "none", "0"}; !slices.Equal(got, want) {
		t.Errorf("captures of thread 3: %v, want %v", got, want)
	}
	if f.Captures(3) != 5 {
		t.Errorf("Captures(3) = %d, want 5", f.Captures(3))
	}
	f.Exit()
	if _, err := f.Threads(nil); !errors.Is(err, target.ErrExited) || !f.Exited() {
		t.Errorf("after Exit: Threads %v, Exited %v", err, f.Exited())
	}
	f.Close()
	if f.Closes() != 1 {
		t.Errorf("Closes = %d", f.Closes())
	}
}
