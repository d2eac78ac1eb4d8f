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
	base := privateDir(t)
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
		{link, link + " is a symbolic link"},
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

// TestSpoolDirNoLinksOnTheWay: a link anywhere on the spool's path is
// refused, also one to a directory of the agent's own user (mode 0700) that
// passes the owner and mode check, and nothing there is removed or sent; a
// spool directory whose parent (the agent's --spool-dir) others can read
// or write, such as /etc, is refused without creating anything in it; missing
// directories are created, mode 0700, only where no one else can write
// (issue 27, defect 3).
func TestSpoolDirNoLinksOnTheWay(t *testing.T) {
	base := privateDir(t)
	forged, err := encodeItem(&Item{Created: time.Now(), Data: []byte("forged")})
	if err != nil {
		t.Fatal(err)
	}
	mkdir := func(path string, perm os.FileMode) string {
		t.Helper()
		if err := os.Mkdir(path, perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, perm); err != nil { // past the umask
			t.Fatal(err)
		}
		return path
	}
	// A directory of the agent's user (root's, mode 0700: the owner and
	// mode check passes it) with files the agent would send and remove.
	victim := mkdir(filepath.Join(base, "victim"), 0o700)
	victimFiles := []string{filepath.Join(victim, "00000000000000000001.item"), filepath.Join(victim, "x.tmp")}
	for _, p := range victimFiles {
		if err := os.WriteFile(p, forged, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	spool := mkdir(filepath.Join(base, "spool"), 0o700)
	if err := os.Symlink(victim, filepath.Join(spool, "otlp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(spool, filepath.Join(base, "spoollink")); err != nil {
		t.Fatal(err)
	}
	etc := mkdir(filepath.Join(base, "etc"), 0o755)
	open := mkdir(filepath.Join(base, "open"), 0o777)
	for _, tc := range []struct {
		dir, want, notCreated string
	}{
		{filepath.Join(spool, "otlp"), filepath.Join(spool, "otlp") + " is a symbolic link", ""},
		{filepath.Join(base, "spoollink", "pyroscope"), filepath.Join(base, "spoollink") + " is a symbolic link", filepath.Join(spool, "pyroscope")},
		{filepath.Join(base, "spoollink", "x", "otlp"), filepath.Join(base, "spoollink") + " is a symbolic link", filepath.Join(spool, "x")},
		{filepath.Join(etc, "otlp"), "spool directory " + etc + " has mode 0755", filepath.Join(etc, "otlp")},
		{filepath.Join(open, "otlp"), "spool directory " + open + " has mode 0777", filepath.Join(open, "otlp")},
		{filepath.Join(open, "spool", "otlp"), "will not create " + filepath.Join(open, "spool") + " in " + open, filepath.Join(open, "spool")},
	} {
		cfg := fastConfig()
		cfg.SpoolDir = tc.dir
		sink := &fakeSink{}
		u, err := New(sink, cfg)
		if err == nil {
			u.Shutdown(ctxTimeout(t, time.Second))
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("spool directory %s: %v; want an error saying %q", tc.dir, err, tc.want)
		}
		if got := sink.received(); len(got) != 0 {
			t.Errorf("spool directory %s: sent %q", tc.dir, got)
		}
		if tc.notCreated != "" {
			if _, err := os.Lstat(tc.notCreated); err == nil {
				t.Errorf("spool directory %s: %s was created", tc.dir, tc.notCreated)
			}
		}
	}
	for _, p := range victimFiles {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("the link's target's %s: %v", p, err)
		}
	}

	// Missing directories in the agent's own: created, mode 0700.
	cfg := fastConfig()
	cfg.SpoolDir = filepath.Join(base, "new", "spool", "otlp")
	u, err := New(&fakeSink{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	u.Shutdown(ctxTimeout(t, time.Second))
	for _, d := range []string{"new", "new/spool", "new/spool/otlp"} {
		if st, err := os.Lstat(filepath.Join(base, d)); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a directory of mode 0700", d, st, err)
		}
	}
}
