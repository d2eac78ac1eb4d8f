package ptrace

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFromTerminal starts a process in the foreground of a terminal of its
// own: a Ctrl-C (SIGINT) reached it from the terminal, another signal did
// not; a process without a terminal got nothing from one.
func TestFromTerminal(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("a pseudo-terminal is needed: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pts.Close()
	fg := exec.Command("sleep", "60")
	fg.Stdin = pts
	fg.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	bg := exec.Command("sleep", "60")
	bg.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	for _, c := range []*exec.Cmd{fg, bg} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer c.Wait()
		defer c.Process.Kill()
	}
	if !FromTerminal(fg.Process.Pid, os.Interrupt) {
		t.Error("SIGINT to a process in its terminal's foreground: not seen as from the terminal")
	}
	if FromTerminal(fg.Process.Pid, syscall.SIGTERM) {
		t.Error("SIGTERM seen as from the terminal")
	}
	if FromTerminal(bg.Process.Pid, os.Interrupt) {
		t.Error("SIGINT to a process without a terminal seen as from one")
	}
}
