//go:build unix

package exporter

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/safefile/safefiletest"
	"github.com/macprof/macprof/profile"
)

// TestWriteFileHostileOutput: a link planted at an output path during the
// recording, in a directory others can write, is replaced rather than
// followed; a FIFO output with no reader fails at once rather than hang;
// a FIFO or link in such a directory is refused before recording (issue
// 17, defect 8).
func TestWriteFileHostileOutput(t *testing.T) {
	tw := newTestWindow(t, profile.ModeCPU)
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o1777); err != nil { // like /tmp
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(shared, "cpu.folded")
	if err := CheckWritable(out); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, out); err != nil { // planted while recording
		t.Fatal(err)
	}
	if err := WriteFile(out, FormatFolded, tw.w, newCache(), Options{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "secret" {
		t.Errorf("the link's target was overwritten: %q", b)
	}
	if st, err := os.Lstat(out); err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
		t.Errorf("output after the link: %v, %v", st, err)
	}
	if err := CheckWritable(out); err != nil {
		t.Errorf("a regular file: %v", err)
	}
	// Before recording, a link or FIFO in such a directory is refused.
	link := filepath.Join(shared, "link.folded")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := CheckWritable(link); err == nil || !strings.Contains(err.Error(), "other users can write") {
		t.Errorf("a link in a shared directory: %v", err)
	}

	// A FIFO in a directory of macprof's own: written to as a FIFO, and
	// an error at once when no process reads it.
	fifo := safefiletest.FIFO(t, "fifo.folded")
	dir := filepath.Dir(fifo)
	if err := CheckWritable(fifo); err != nil {
		t.Fatal(err)
	}
	err := safefiletest.Returns(t, 10*time.Second, "writing to a FIFO without a reader", func() error {
		return WriteFile(fifo, FormatFolded, tw.w, newCache(), Options{})
	})
	if err == nil || !strings.Contains(err.Error(), "no process reads") {
		t.Errorf("a FIFO without a reader: %v", err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v, %v", st, err)
	}
	for _, p := range []string{os.DevNull, "-"} {
		if err := CheckWritable(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if err := WriteFile(os.DevNull, FormatFolded, tw.w, newCache(), Options{}); err != nil {
		t.Errorf("%s: %v", os.DevNull, err)
	}
	// A regular file keeps its mode.
	keep := filepath.Join(dir, "keep.folded")
	if err := os.WriteFile(keep, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(keep, FormatFolded, tw.w, newCache(), Options{}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(keep); err != nil || st.Mode().Perm() != 0o600 || st.Size() == 0 {
		t.Errorf("rewritten file: %v, %v", st, err)
	}
}

// TestWriteFileFreshOwner: an output that another user created beforehand,
// mode 0666, is replaced by a file of macprof's user with the default mode,
// so that its creator can neither rewrite nor keep the profile (issue 27,
// defect 8).
func TestWriteFileFreshOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test gives a file to another user: run it as root")
	}
	tw := newTestWindow(t, profile.ModeCPU)
	out := filepath.Join(t.TempDir(), "cpu.folded")
	if err := os.WriteFile(out, []byte("planted"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(out, 0o666); err != nil { // past the umask
		t.Fatal(err)
	}
	if err := os.Chown(out, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := CheckWritable(out); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(out, FormatFolded, tw.w, newCache(), Options{}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(out)
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	if sys.Uid != 0 || sys.Gid != 0 || st.Mode().Perm() != 0o644 || st.Size() == 0 || string(mustRead(t, out)) == "planted" {
		t.Errorf("rewritten output: owner %d:%d, mode %#o, %d bytes; want a new file of 0:0, mode 0644", sys.Uid, sys.Gid, st.Mode().Perm(), st.Size())
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
