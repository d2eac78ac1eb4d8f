package sampler

import (
	"testing"
	"time"

	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
)

// descendantDrainer is a drainingTarget whose thread kid's samples are
// taken in another process, PID kidPID (as descendant rings hand out a
// child's): DrainSamples sets their Capture.PID, and leaves it alone for
// the target's own threads, as a backend does.
type descendantDrainer struct {
	*drainingTarget
	kid    target.ThreadID
	kidPID int
}

func (d descendantDrainer) DrainSamples(t target.ThreadID, caps []*target.Capture) (int, error) {
	n, err := d.drainingTarget.DrainSamples(t, caps)
	if t == d.kid {
		for _, c := range caps[:n] {
			c.PID = d.kidPID
		}
	}
	return n, err
}

// TestDrainKeepsEachSampleInItsProcess: the captures drained are reused
// from thread to thread, and a sample of the target's own thread drained
// after a descendant's is counted under the target's PID, not the
// descendant's. (The capture kept the PID of the last sample that set it:
// a command's threads showed up under its children's PIDs.)
func TestDrainKeepsEachSampleInItsProcess(t *testing.T) {
	const hz = 100
	d := descendantDrainer{newDraining(10, time.Second/hz, map[target.ThreadID]*targettest.Thread{
		1: {Share: 1, Stack: []uint64{1, 2, 3}},
		2: {Share: 1, Stack: []uint64{4, 5}},
	}), 2, 77}
	ws := run(t, Config{Hz: hz}, 600*time.Millisecond, d)
	by := map[target.ThreadID]map[int]int64{}
	for _, s := range ws[0].Samples {
		if by[s.Thread] == nil {
			by[s.Thread] = map[int]int64{}
		}
		by[s.Thread][s.PID] += s.Count
	}
	t.Logf("samples by thread and PID: %v", by)
	if n := by[1][77]; n > 0 {
		t.Errorf("%d samples of the target's thread 1 under the descendant's PID 77", n)
	}
	if by[1][10] == 0 || by[2][77] == 0 {
		t.Errorf("thread 1 has %d samples under PID 10, thread 2 %d under PID 77: want both", by[1][10], by[2][77])
	}
}
