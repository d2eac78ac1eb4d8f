//go:build unix

package symbolize

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
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
	answers := aloneAnswers(t, cfg, 256)
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
	f := inputFile(t, in.Bytes())
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

// TestSymbolizeWordsAcrossReads checks the words of one batch taken in
// several reads of a reused buffer: addresses and words that are not
// addresses across the buffer's end, one longer than the buffer, from a
// regular file (one batch) and from a reader whose reads end anywhere,
// each answered as alone.
func TestSymbolizeWordsAcrossReads(t *testing.T) {
	cfg := Config{Binary: uni, Arch: "arm64"}
	rng := rand.New(rand.NewSource(1))
	var words []string
	for size := 0; size < 3*readBuffer; {
		var w string
		switch rng.Intn(8) {
		case 0:
			w = fmt.Sprintf("zz%d", rng.Intn(1000)) // not an address
		case 1:
			w = "0x" + strings.Repeat("1", 17) // too many digits
		default:
			w = fmt.Sprintf("%#x", 0x100000388+rng.Intn(256))
		}
		if len(words) == 1000 {
			w = strings.Repeat("q", min(readBuffer+readBuffer/3, maxWord-1)) // longer than the buffer
		}
		words = append(words, w)
		size += len(w) + 1
	}
	want := oneByOne(t, cfg, words)
	in := strings.Join(words, " \n\t")
	name := filepath.Join(t.TempDir(), "addrs")
	if err := os.WriteFile(name, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	for what, r := range map[string]func() io.Reader{
		"file": func() io.Reader {
			f, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		},
		"uneven reads": func() io.Reader { return &unevenReader{r: strings.NewReader(in), rng: rand.New(rand.NewSource(2))} },
	} {
		var out bytes.Buffer
		if err := Run(cfg, nil, r(), &out); !errors.Is(err, ErrNotAddress) {
			t.Errorf("%s: %v, want ErrNotAddress", what, err)
		}
		if !bytes.Equal(out.Bytes(), want.Bytes()) {
			got, exp := strings.Split(out.String(), "\n"), strings.Split(want.String(), "\n")
			for i := range min(len(got), len(exp)) {
				if got[i] != exp[i] {
					t.Errorf("%s: line %d: %.80q, want %.80q", what, i, got[i], exp[i])
					break
				}
			}
			t.Errorf("%s: %d lines, want %d", what, len(got), len(exp))
		}
	}
}

// unevenReader returns what r holds in reads of random sizes, some
// larger than readBuffer.
type unevenReader struct {
	r   io.Reader
	rng *rand.Rand
}

func (u *unevenReader) Read(p []byte) (int, error) {
	n := 1 + u.rng.Intn(readBuffer/2)
	if u.rng.Intn(4) == 0 {
		n = 1 + u.rng.Intn(16)
	}
	return u.r.Read(p[:min(n, len(p))])
}

// TestSymbolizeBatchPastIndexBits checks a batch of more words than
// resolveInOrder packs with their index (1<<20), most of them outside
// the binary: each answered as alone, in order.
func TestSymbolizeBatchPastIndexBits(t *testing.T) {
	cfg := Config{Binary: uni, Arch: "arm64"}
	answers := aloneAnswers(t, cfg, 256)
	const n = 1<<20 + 1000
	var in, want bytes.Buffer
	for i := range n {
		if i%1000 == 0 {
			fmt.Fprintf(&in, "%#x\n", 0x100000388+i%256)
			want.WriteString(answers[i%256])
			continue
		}
		in.WriteString("1\n")
		want.WriteString("0x1 (not in prog_universal)\n")
	}
	f := inputFile(t, in.Bytes())
	var out bytes.Buffer
	if err := Run(cfg, nil, f, &out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want.Bytes()) {
		t.Errorf("%d bytes of answers, want %d", out.Len(), want.Len())
	}
}

// aloneAnswers returns the answers, each asked alone, for the n addresses
// from 0x100000388 up of cfg's binary.
func aloneAnswers(t *testing.T, cfg Config, n int) []string {
	t.Helper()
	answers := make([]string, n)
	for i := range answers {
		var one bytes.Buffer
		if err := Run(cfg, []string{fmt.Sprintf("%#x", 0x100000388+i)}, nil, &one); err != nil {
			t.Fatal(err)
		}
		answers[i] = one.String()
	}
	return answers
}

// inputFile returns data in a file of the test's, open for reading.
func inputFile(t *testing.T, data []byte) *os.File {
	t.Helper()
	name := filepath.Join(t.TempDir(), "addrs")
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
