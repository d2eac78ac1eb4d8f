//go:build unix

package upload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSpoolDirMustBePrivate: a spool directory others can write, one of
// another user, or a link to another user's directory is refused before
// anything in it is read, written or removed; a link planted as an item is
// not followed (issue 17, defect 5).
func TestSpoolDirMustBePrivate(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test gives a directory to another user: run it as root")
	}
	base := t.TempDir()
	forged, err := encodeItem(&Item{Created: time.Now(), Data: []byte("forged")})
	if err != nil {
		t.Fatal(err)
	}
	// A victim's directory, with an item and a leftover temp file that
	// the agent would upload and remove.
	victim := filepath.Join(base, "victim")
	if err := os.Mkdir(victim, 0o700); err != nil {
		t.Fatal(err)
	}
	victimFiles := []string{filepath.Join(victim, "00000000000000000001.item"), filepath.Join(victim, "x.tmp")}
	for _, p := range victimFiles {
		if err := os.WriteFile(p, forged, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(victim, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want string }{
		{open, "has mode 0755"},
		{victim, "owned by uid 65534"},
		{link, "owned by uid 65534"},
	} {
		cfg := fastConfig()
		cfg.SpoolDir = tc.dir
		u, err := New(&fakeSink{}, cfg)
		if err == nil {
			u.Shutdown(ctxTimeout(t, time.Second))
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("spool directory %s: %v; want an error saying %q", tc.dir, err, tc.want)
		}
	}
	for _, p := range victimFiles {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("the victim's %s: %v", p, err)
		}
	}

	// In the agent's own directory, an item that is a link to a forged
	// item elsewhere is neither sent nor followed.
	own := filepath.Join(base, "own")
	cfg := fastConfig()
	cfg.SpoolDir = own
	u, err := New(&fakeSink{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	u.Shutdown(ctxTimeout(t, time.Second))
	if st, err := os.Stat(own); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the spool directory New created: %v, %v; want mode 0700", st.Mode(), err)
	}
	if err := os.Symlink(victimFiles[0], filepath.Join(own, "00000000000000000002.item")); err != nil {
		t.Fatal(err)
	}
	sink := &fakeSink{}
	u, err = New(sink, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Shutdown(ctxTimeout(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := sink.received(); len(got) != 0 {
		t.Errorf("sent %q from a link", got)
	}
	if _, err := os.Stat(victimFiles[0]); err != nil {
		t.Errorf("the link's target: %v", err)
	}
}
