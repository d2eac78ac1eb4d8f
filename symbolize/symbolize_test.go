package symbolize

import (
	"bufio"
	"bytes"
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unsafe"
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

// TestScanWordAsParseHex checks that scanWord, which reads a word and its
// value in one pass, ends each word where isSpace does and reads it as
// parseHex does, on random text of hex digits, 0x, other bytes and spaces.
func TestScanWordAsParseHex(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	alphabet := []byte("0123456789abcdefABCDEFxXg- \n\t\r\v\f\x00\x80\xff")
	for range 20_000 {
		b := make([]byte, r.Intn(40))
		for i := range b {
			switch r.Intn(4) {
			case 0:
				b[i] = alphabet[r.Intn(len(alphabet))]
			case 1:
				b[i] = byte(r.Intn(256))
			default:
				b[i] = "0123456789abcdef"[r.Intn(16)]
			}
			if i > 0 && r.Intn(8) == 0 {
				b[i-1], b[i] = '0', 'x'
			}
		}
		for i := 0; i < len(b); {
			if isSpace(b[i]) {
				i++
				continue
			}
			j := i
			for j < len(b) && !isSpace(b[j]) {
				j++
			}
			end, v, ok := scanWord(b, i)
			want, wantOK := parseHex(b[i:j])
			if end != j || ok != wantOK || (ok && v != want) {
				t.Fatalf("%q at %d: scanWord %d, %#x, %v; want %d, %#x, %v", b, i, end, v, ok, j, want, wantOK)
			}
			i = j
		}
	}
}

// TestAppendNumbers checks appendDec, appendUint, appendHex, putHex and
// putUint against strconv on the edges of their cases and on random
// values.
func TestAppendNumbers(t *testing.T) {
	vals := []uint64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 1001, 9999, 10000, 10001, 1 << 31, 1<<31 - 1, 1 << 32, 1<<63 - 1, 1 << 63, ^uint64(0)}
	r := rand.New(rand.NewSource(4))
	for range 10_000 {
		vals = append(vals, r.Uint64()>>r.Intn(64))
	}
	prefix := []byte("x")
	for _, v := range vals {
		if got, want := string(appendDec(prefix, int64(v))), string(strconv.AppendInt(prefix, int64(v), 10)); got != want {
			t.Fatalf("appendDec(%d) = %q, want %q", int64(v), got, want)
		}
		if got, want := string(appendUint(prefix, v)), string(strconv.AppendUint(prefix, v, 10)); got != want {
			t.Fatalf("appendUint(%d) = %q, want %q", v, got, want)
		}
		if got, want := string(appendHex(prefix, v)), string(strconv.AppendUint(prefix, v, 16)); got != want {
			t.Fatalf("appendHex(%#x) = %q, want %q", v, got, want)
		}
		var buf [40]byte
		p := unsafe.Pointer(&buf[0])
		if got, want := string(buf[:uintptr(putHex(p, v))-uintptr(p)]), strconv.FormatUint(v, 16); got != want {
			t.Fatalf("putHex(%#x) = %q, want %q", v, got, want)
		}
		if got, want := string(buf[:uintptr(putUint(p, v))-uintptr(p)]), strconv.FormatUint(v, 10); got != want {
			t.Fatalf("putUint(%d) = %q, want %q", v, got, want)
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

// TestSymbolizeBatchKeepsOrder checks that answering a batch in address
// order prints what answering its words one at a time prints, in the
// words' order, however the reads split the words: on the test binary (Go,
// file:line from its pclntab), 3,000 addresses in random order with
// repeats, a word that is not an address and one outside the binary.
func TestSymbolizeBatchKeepsOrder(t *testing.T) {
	exe, text := testText(t)
	rng := rand.New(rand.NewSource(1))
	var words []string
	for i := 0; i < 3000; i++ {
		words = append(words, fmt.Sprintf("%#x", text.Addr+uint64(rng.Int63n(int64(text.Size)))))
	}
	words = append(words, words[:100]...)
	words = append(words, "zz", "0x10")
	rng.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })

	cfg := Config{Binary: exe}
	want := oneByOne(t, cfg, words)
	if !strings.Contains(want.String(), ".go:") {
		t.Fatalf("no file:line in %.200q", want.String())
	}
	in := strings.Join(words, "\n") + "\n"
	for name, r := range map[string]func() io.Reader{
		"whole":    func() io.Reader { return strings.NewReader(in) },
		"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(in)) },
		"halves":   func() io.Reader { return iotest.HalfReader(strings.NewReader(strings.TrimSpace(in))) },
	} {
		var out bytes.Buffer
		if err := Run(cfg, nil, r(), &out); !errors.Is(err, ErrNotAddress) {
			t.Errorf("%s: %v, want ErrNotAddress", name, err)
		}
		if out.String() != want.String() {
			got, exp := strings.Split(out.String(), "\n"), strings.Split(want.String(), "\n")
			for i := range min(len(got), len(exp)) {
				if got[i] != exp[i] {
					t.Errorf("%s: line %d: %q, want %q", name, i, got[i], exp[i])
					break
				}
			}
			t.Errorf("%s: %d lines, want %d", name, len(got), len(exp))
		}
	}
	var out bytes.Buffer
	err := Run(cfg, nil, strings.NewReader(strings.Repeat("1", 2<<20)), &out)
	if !errors.Is(err, bufio.ErrTooLong) {
		t.Errorf("a 2 MiB word: %v, want %v", err, bufio.ErrTooLong)
	}
}

// TestRadixSort checks radixSort against slices.Sort on random values of
// several widths, with its buffers reused from one call to the next.
func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var v, tmp []uint64
	for _, bits := range []uint{0, 1, 8, 9, 23, 43, 63, 64} {
		for _, n := range []int{0, 1, 2, 1000} {
			v = v[:0]
			for range n {
				x := rng.Uint64()
				if bits < 64 {
					x &= 1<<bits - 1
				}
				v = append(v, x)
			}
			for _, skip := range []uint{0, 20} {
				// By the bits from skip up, equal ones in
				// their order.
				want := slices.Clone(v)
				slices.SortStableFunc(want, func(x, y uint64) int { return cmp.Compare(x>>skip, y>>skip) })
				var got []uint64
				got, tmp = radixSort(slices.Clone(v), tmp, skip)
				if !slices.Equal(got, want) {
					t.Fatalf("%d values of %d bits, from bit %d: not sorted", n, bits, skip)
				}
			}
		}
	}
}

// TestAnswerSmallWithoutPointers checks that a batch's answer per word
// stays small and holds no pointer: a batch of 100,000 addresses is
// written in address order and read in the words' order, and answers of
// 104 bytes with strings made that a cache miss each way, fresh pages
// and garbage to scan.
func TestAnswerSmallWithoutPointers(t *testing.T) {
	if n := unsafe.Sizeof(answer{}); n > 24 {
		t.Errorf("answer takes %d bytes, want at most 24", n)
	}
	var check func(typ reflect.Type)
	check = func(typ reflect.Type) {
		for i := range typ.NumField() {
			switch f := typ.Field(i); f.Type.Kind() {
			case reflect.Int32, reflect.Uint32, reflect.Int64, reflect.Uint64:
			case reflect.Struct:
				check(f.Type)
			default:
				t.Errorf("answer.%s is a %s", f.Name, f.Type)
			}
		}
	}
	check(reflect.TypeFor[answer]())
}

// TestNeitherMachONorELF: a file that is neither is refused saying so,
// with its first bytes, not with a Mach-O parser's "bad magic".
func TestNeitherMachONorELF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(path, []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Run(Config{Binary: path}, []string{"0x1000"}, nil, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "is neither a Mach-O nor an ELF file") || !strings.Contains(err.Error(), `"root"`) {
		t.Errorf("error %v; want it to say the file is neither Mach-O nor ELF", err)
	}
}

// oneByOne returns cfg's answers to words, each answered on its own line
// by one symbolizer, as the reference a batch must equal.
func oneByOne(t *testing.T, cfg Config, words []string) *bytes.Buffer {
	t.Helper()
	s, err := open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	var want bytes.Buffer
	w := newOutput(&want)
	for _, word := range words {
		s.line(w, []byte(word))
	}
	w.Flush()
	return &want
}

// The least address of a batch may be a word added through add (the first
// of an answer block, the words' inline path's only other way): its table
// lookup must still find it (resolveInOrder sorts by the addresses' distance
// from the least one, counted as the words are added).
func TestSymbolizeLeastAddressStartsABlock(t *testing.T) {
	exe, text := testText(t)
	rng := rand.New(rand.NewSource(2))
	var words []string
	for range 1 << answerBits {
		words = append(words, fmt.Sprintf("%#x", text.Addr+0x1000+uint64(rng.Int63n(int64(text.Size-0x1000)))))
	}
	words = append(words, fmt.Sprintf("%#x", text.Addr), fmt.Sprintf("%#x", text.Addr+0x800))
	cfg := Config{Binary: exe}
	want := oneByOne(t, cfg, words)
	var out bytes.Buffer
	if err := Run(cfg, nil, strings.NewReader(strings.Join(words, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	if got, exp := strings.Split(out.String(), "\n"), strings.Split(want.String(), "\n"); out.String() != want.String() {
		for i := range min(len(got), len(exp)) {
			if got[i] != exp[i] {
				t.Fatalf("line %d (%s): %q, want %q", i, words[i], got[i], exp[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(got), len(exp))
	}
}

// testText returns the test binary's path and its .text section.
func testText(t *testing.T) (string, *elf.Section) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text := f.Section(".text")
	if text == nil {
		t.Fatalf("%s: no .text", exe)
	}
	return exe, text
}

// TestSymbolizeLinesWithoutFileAsPrint checks that printLines writes the
// lines with no file:line (its own paths, by moves and digits in place) as
// print writes them: every address of the __text of a stripped binary
// (unnamed functions) and of one without line tables (named ones), in a
// batch from standard input.
func TestSymbolizeLinesWithoutFileAsPrint(t *testing.T) {
	for _, c := range []struct{ fixture, want string }{
		{"prog_arm64_stripped", "prog_arm64_stripped+0x"},
		{"cxx_arm64", ">(int) (in cxx_arm64) + "},
	} {
		t.Run(c.fixture, func(t *testing.T) { linesAsPrint(t, c.fixture, c.want) })
	}
}

// linesAsPrint is TestSymbolizeLinesWithoutFileAsPrint on one fixture,
// whose answers must hold want.
func linesAsPrint(t *testing.T, fixture, wantIn string) {
	cfg := Config{Binary: filepath.Join("..", "images", "testdata", "macho", fixture)}
	s, err := open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	var words []string
	for a := s.img.Start; a < s.img.Limit; a += 4 {
		words = append(words, fmt.Sprintf("%#x", a))
	}
	if len(words) < 100 {
		t.Fatalf("only %d addresses in %s", len(words), cfg.Binary)
	}
	for _, word := range words {
		s.word([]byte(word))
	}
	s.resolveInOrder()
	s.demangleQueued()
	var want bytes.Buffer
	w := newOutput(&want)
	var g [1]gathered
	for i := range s.answers.len() {
		a := s.answers.at(i)
		s.gather(g[:], []answer{*a})
		s.print(w, a, &g[0])
	}
	w.Flush()
	if !strings.Contains(want.String(), wantIn) {
		t.Fatalf("no %q in the answers:\n%s", wantIn, want.String())
	}
	var got bytes.Buffer
	if err := Run(cfg, nil, strings.NewReader(strings.Join(words, "\n")), &got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		g, e := strings.Split(got.String(), "\n"), strings.Split(want.String(), "\n")
		for i := range min(len(g), len(e)) {
			if g[i] != e[i] {
				t.Fatalf("line %d (%s): %q, want %q", i, words[i], g[i], e[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(g), len(e))
	}
}
