package agent

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/macprof/macprof/profile"
)

// TestOwnersLabel: each window labels the processes whose user is known
// with it, the last window of one that exited included, and none after.
func TestOwnersLabel(t *testing.T) {
	var o owners
	o.set(5, 1000)
	o.set(6, 0)
	window := func() *profile.Window {
		w := &profile.Window{Processes: []profile.Process{{PID: 5}, {PID: 6}, {PID: 7}}}
		o.label(w)
		return w
	}
	w := window()
	if p := w.Processes; !p[0].HasUID || p[0].UID != 1000 || !p[1].HasUID || p[1].UID != 0 || p[2].HasUID {
		t.Errorf("labelled %+v, want 5 as 1000, 6 as 0, 7 unknown", p)
	}
	o.exited(5)
	if p := window().Processes; !p[0].HasUID {
		t.Errorf("the window after 5 exited lost its user: %+v", p[0])
	}
	if p := window().Processes; p[0].HasUID || !p[1].HasUID {
		t.Errorf("a later window: %+v", p)
	}
}

// TestLoggerRedacts: an endpoint's password, user token or API key never
// reaches the log, in the message, a string, an error, a Stringer or a
// group, in text and JSON (issue 27, defect 8).
func TestLoggerRedacts(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		log, err := NewLogger(&buf, format, true)
		if err != nil {
			t.Fatal(err)
		}
		log = log.With("endpoint", "https://ann:hunter2@c:4318/p")
		log.Info("exporting to https://tok3n@c/x", "to", "http https://c/p?api_key=s3cret",
			"err", errors.New(`Post "https://ann:***@c/p?token=s3cret": refused`),
			slog.Group("g", "url", "http://u:hunter2@h/"))
		if s := buf.String(); strings.Contains(s, "hunter2") || strings.Contains(s, "s3cret") || strings.Contains(s, "tok3n") || strings.Count(s, "REDACTED") != 6 {
			t.Errorf("%s log shows a credential:\n%s", format, s)
		}
	}
}
