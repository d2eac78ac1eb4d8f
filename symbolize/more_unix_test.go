//go:build unix

package symbolize

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMore checks when a batch may take more of standard input: a pipe
// holding more or whose writer is gone, and a regular file, but not an
// empty pipe whose writer is still there (it may wait for the answers),
// nor a reader that is no file.
func TestMore(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if more(r) {
		t.Error("an empty pipe, its writer open: more")
	}
	w.WriteString("0x10\n")
	if !more(r) {
		t.Error("a pipe holding an address: not more")
	}
	r.Read(make([]byte, 16))
	w.Close()
	if !more(r) {
		t.Error("a pipe whose writer is gone (its end to read): not more")
	}
	f, err := os.CreateTemp(t.TempDir(), "addrs")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !more(f) {
		t.Error("a regular file: not more")
	}
	if more(strings.NewReader("0x10\n")) {
		t.Error("a strings.Reader: more")
	}
}

// TestSymbolizeBatchPastTheBuffer checks that addresses from a pipe
// written all at once and from a regular file, more than one buffer's
// worth with a word across its end, are answered as one by one.
func TestSymbolizeBatchPastTheBuffer(t *testing.T) {
	cfg := Config{Binary: uni, Arch: "arm64"}
	answers := make([]string, 256)
	for i := range answers {
		var one bytes.Buffer
		if err := Run(cfg, []string{fmt.Sprintf("%#x", 0x100000388+i)}, nil, &one); err != nil {
			t.Fatal(err)
		}
		answers[i] = one.String()
	}
	var in, want bytes.Buffer
	for i := 0; in.Len() < readBuffer+readBuffer/2; i++ {
		fmt.Fprintf(&in, "%#x\n", 0x100000388+i%256)
		want.WriteString(answers[i%256])
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		w.Write(in.Bytes())
		w.Close()
	}()
	name := filepath.Join(t.TempDir(), "addrs")
	if err := os.WriteFile(name, in.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for what, stdin := range map[string]*os.File{"pipe": r, "file": f} {
		var out bytes.Buffer
		if err := Run(cfg, nil, stdin, &out); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !bytes.Equal(out.Bytes(), want.Bytes()) {
			t.Errorf("%s: %d bytes of answers, want %d", what, out.Len(), want.Len())
		}
	}
}
