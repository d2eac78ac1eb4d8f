package symbolize

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

var uni = filepath.Join("..", "images", "testdata", "macho", "prog_universal")

// TestSymbolizeRun calls Run directly: addresses as arguments and from a reader, a
// word that is not an address, and a reader that fails. (The command's
// own tests, with flags, exit status and messages, are in cmd/macprof.)
func TestSymbolizeRun(t *testing.T) {
	cfg := Config{Binary: uni, Arch: "arm64"}
	want := "func_10 (in prog_universal) + 0\nfunc_10 (in prog_universal) + 48\n"
	var out bytes.Buffer
	if err := Run(cfg, []string{"0x100000388", "1000003b8"}, nil, &out); err != nil || out.String() != want {
		t.Errorf("args: %v, %q; want %q", err, out.String(), want)
	}
	out.Reset()
	if err := Run(cfg, nil, strings.NewReader(" 0x100000388\n\t0x1000003b8  \n"), &out); err != nil || out.String() != want {
		t.Errorf("reader: %v, %q; want %q", err, out.String(), want)
	}
	out.Reset()
	err := Run(cfg, []string{"0x10", "zz"}, nil, &out)
	if !errors.Is(err, ErrNotAddress) || out.String() != "0x10 (not in prog_universal)\n?? (not an address: zz)\n" {
		t.Errorf("bad word: %v, %q", err, out.String())
	}
	out.Reset()
	err = Run(cfg, nil, iotest.TimeoutReader(strings.NewReader("0x100000388\n")), &out)
	if err == nil || !strings.HasPrefix(err.Error(), "reading standard input: ") {
		t.Errorf("failing reader: %v", err)
	}
	cfg.Binary = filepath.Join("..", "images", "testdata", "macho", "nonexistent")
	if err := Run(cfg, []string{"0x1"}, nil, &out); err == nil || !strings.Contains(err.Error(), cfg.Binary) {
		t.Errorf("missing file: %v, want an error naming it", err)
	}
}

func TestSymbolizeParseAddr(t *testing.T) {
	for s, want := range map[string]uint64{"0x1F": 0x1f, "1f": 0x1f, "0Xffffffffffffffff": ^uint64(0)} {
		if v, err := ParseAddr(s); err != nil || v != want {
			t.Errorf("ParseAddr(%q) = %#x, %v; want %#x", s, v, err, want)
		}
	}
	for _, s := range []string{"", "0x", "xyz", "0x10000000000000000", "-1"} {
		if _, err := ParseAddr(s); err == nil {
			t.Errorf("ParseAddr(%q): no error", s)
		}
	}
}

// TestSymbolizeStrippedByStart checks that every address of an unnamed
// function is printed under the function's start, with its offset.
func TestSymbolizeStrippedByStart(t *testing.T) {
	cfg := Config{Binary: filepath.Join("..", "images", "testdata", "macho", "prog_arm64_stripped")}
	var out bytes.Buffer
	if err := Run(cfg, []string{"0x100000388", "0x100000390", "0x1000003b8"}, nil, &out); err != nil {
		t.Fatal(err)
	}
	want := "prog_arm64_stripped+0x100000388 (in prog_arm64_stripped) + 0\n" +
		"prog_arm64_stripped+0x100000388 (in prog_arm64_stripped) + 8\n" +
		"prog_arm64_stripped+0x100000388 (in prog_arm64_stripped) + 48\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}
