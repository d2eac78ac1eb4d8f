package exporter

import (
	"slices"
	"testing"

	"github.com/macprof/macprof/profile"
)

// TestCommentsSayWhatTicksAre: the profile's comment gives the captures
// and the sampler's wake-ups as such, not as "ticks" that read as samples
// lost (a 3 s recording at 99 Hz drained by the kernel wakes about 31
// times for 270 captures).
func TestCommentsSayWhatTicksAre(t *testing.T) {
	w := &profile.Window{Mode: profile.ModeCPU}
	w.Stats.Ticks, w.Stats.MissedTicks, w.Stats.Captures = 31, 2, 270
	want := "macprof: mode cpu, 270 captures; the sampler woke 31 times (2 wake-ups late)"
	if got := comments(w); !slices.Contains(got, want) {
		t.Errorf("comments %q, want %q among them", got, want)
	}
}
