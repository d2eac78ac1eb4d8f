package images_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/fixture"
)

// goToolBuildID is what `go tool buildid` says of a file: the oracle.
func goToolBuildID(t *testing.T, path string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test compares with `go tool buildid` and needs the go command on PATH: %v", err)
	}
	out, err := exec.Command(goTool, "tool", "buildid", path).Output()
	if err != nil {
		t.Fatalf("go tool buildid %s: %v", path, err)
	}
	return strings.TrimSpace(string(out))
}

// GoImage finds a Go program and its build ID as `go tool buildid` does:
// in an ELF note (this test binary) and at the start of a Mach-O's text (a
// GOOS=darwin build); a C program is not Go.
func TestGoImage(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	darwin := fixture.GoDarwin(t, "arm64", "package main\n\nfunc main() { println(\"hi\") }\n")
	m, err := images.OpenMachO(darwin, "")
	if err != nil {
		t.Fatal(err)
	}
	uuid := m.UUIDString()
	m.Close()
	for _, c := range []struct {
		img  images.Image
		want string
	}{
		{images.Image{Path: self, Format: images.FormatELF}, goToolBuildID(t, self)},
		{images.Image{Path: darwin, Format: images.FormatMachO, BuildID: uuid}, goToolBuildID(t, darwin)},
	} {
		got, err := images.GoImage(&c.img)
		if err != nil || !got.Go || got.BuildID != c.want || c.want == "" {
			t.Errorf("%s: %+v, %v; want Go with build ID %q", c.img.Path, got, err, c.want)
		}
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("this test needs a C program: no sh on PATH: %v", err)
	}
	if got, err := images.GoImage(&images.Image{Path: sh, Format: images.FormatELF}); err != nil || got.Go || got.BuildID != "" {
		t.Errorf("%s: %+v, %v; want not Go", sh, got, err)
	}
}
