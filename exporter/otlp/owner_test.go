package otlp_test

import (
	"testing"

	pb "go.opentelemetry.io/proto/slim/otlp/profiles/v1development"

	"github.com/macprof/macprof/exporter/otlp"
	"github.com/macprof/macprof/internal/collectortest"
	"github.com/macprof/macprof/internal/fixture"
)

// TestBuildProcessUserID: a process whose user the agent knows has it as
// process.user.id on its resource, over a configured attribute of that
// name; one whose user is unknown has none.
func TestBuildProcessUserID(t *testing.T) {
	for _, tc := range []struct {
		uid    int
		known  bool
		wantID string
	}{
		{1001, true, "1001"},
		{0, true, "0"},
		{0, false, ""},
	} {
		fx := fixture.NewFixture(t, 7)
		fx.Window.Processes[0].UID, fx.Window.Processes[0].HasUID = tc.uid, tc.known
		req := build(t, fx.Window, otlp.BuildOptions{Attributes: map[string]string{otlp.AttrProcessUserID: "forged"}})
		ss, err := collectortest.Flatten(&pb.ProfilesData{ResourceProfiles: req.ResourceProfiles, Dictionary: req.Dictionary})
		if err != nil {
			t.Fatal(err)
		}
		got, ok := ss[0].Resource[otlp.AttrProcessUserID]
		if tc.known && got != tc.wantID || !tc.known && ok && got != "forged" {
			t.Errorf("uid %d (known %v): %s %q, want %q", tc.uid, tc.known, otlp.AttrProcessUserID, got, tc.wantID)
		}
	}
}
