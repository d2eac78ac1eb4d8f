package record

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
)

// TestWriteSummaryLost: samples lost are counted in the share that could
// not be attributed to a stack, each reason on a line of its own with its
// frame.
func TestWriteSummaryLost(t *testing.T) {
	w := &profile.Window{
		Stacks: []profile.Stack{{PCs: []uint64{1}}, {Unsampled: true}, {Lost: profile.LostBufferFull}, {Lost: profile.LostNoSample}},
		Samples: []profile.Sample{{Stack: 0, Count: 140}, {Stack: 1, Count: 10},
			{Stack: 2, Count: 40}, {Stack: 3, Count: 10}},
	}
	var b bytes.Buffer
	WriteSummary(&b, w, time.Second/99)
	for _, want := range []string{
		"macprof: 30.0% of the CPU time (60 samples) could not be attributed to a stack, in these parts:\n",
		"macprof:   5.0% (10 samples) shown as [unsampled]: threads that ended",
		"macprof:   20.0% (40 samples) shown as [lost: buffer full]: the kernel's sample buffer was full",
		"macprof:   5.0% (10 samples) shown as [lost: no sample]: CPU time the kernel took no sample of",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary:\n%s\nlacks %q", b.String(), want)
		}
	}
}

// TestWriteSummaryUnattributedInAWallProfile: a wall profile's samples are
// thread time, running or waiting, so its unattributed share is of that,
// never "of the CPU time".
func TestWriteSummaryUnattributedInAWallProfile(t *testing.T) {
	w := &profile.Window{
		Mode:    profile.ModeWall,
		Stacks:  []profile.Stack{{PCs: []uint64{1}}, {Unsampled: true}, {Lost: profile.LostBufferFull}},
		Samples: []profile.Sample{{Stack: 0, Count: 150}, {Stack: 1, Count: 50}},
	}
	var b bytes.Buffer
	WriteSummary(&b, w, time.Second/99)
	if want := "macprof: 25.0% of the thread time (50 samples) could not be attributed to a stack, shown as [unsampled]"; !strings.Contains(b.String(), want) {
		t.Errorf("summary:\n%s\nlacks %q", b.String(), want)
	}
	w.Samples = append(w.Samples, profile.Sample{Stack: 2, Count: 200})
	b.Reset()
	WriteSummary(&b, w, time.Second/99)
	if want := "macprof: 62.5% of the thread time (250 samples) could not be attributed to a stack, in these parts:\n"; !strings.Contains(b.String(), want) {
		t.Errorf("summary:\n%s\nlacks %q", b.String(), want)
	}
	if strings.Contains(b.String(), "CPU time") {
		t.Errorf("a wall profile's summary speaks of CPU time:\n%s", b.String())
	}
}

// TestWriteSummaryTruncated: a share of 1% or more of samples whose stacks
// were cut short is said, with why; a smaller one is not.
func TestWriteSummaryTruncated(t *testing.T) {
	w := &profile.Window{
		Stacks:  []profile.Stack{{PCs: []uint64{1, 2}}, {PCs: []uint64{3}, Truncated: true}},
		Samples: []profile.Sample{{Stack: 0, Count: 180}, {Stack: 1, Count: 20}},
	}
	var b bytes.Buffer
	WriteSummary(&b, w, time.Second/99)
	if want := "macprof: 10.0% of the samples (20) have stacks cut short, under [truncated]: their callers could not be walked"; !strings.Contains(b.String(), want) {
		t.Errorf("summary:\n%s\nlacks %q", b.String(), want)
	}
	w.Samples[0].Count = 2000
	b.Reset()
	WriteSummary(&b, w, time.Second/99)
	if strings.Contains(b.String(), "cut short") {
		t.Errorf("0.99%% of the samples truncated said:\n%s", b.String())
	}
}
