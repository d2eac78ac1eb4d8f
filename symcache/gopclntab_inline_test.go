package symcache

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// inlinePclntab builds a Go 1.20 pclntab by hand, with go:func.*: main.a
// at text+0 (16 bytes) has main.b inlined at [0, 8), called from pc 12;
// lines are 30 in [0, 8) and 10 in [8, 16), all in a.go. main.b at
// text+16 is as in tinyPclntab.
func inlinePclntab() (tab, gofunc []byte) {
	le := binary.LittleEndian
	b := make([]byte, 72)
	le.PutUint32(b, go120Magic)
	b[6], b[7] = 1, 8
	b = append(b, "main.a\x00main.b\x00"...) // names at 72
	b = le.AppendUint32(b, 0)                // cutab at 86
	b = append(b, "a.go\x00"...)             // filetab at 90
	// pctab at 95: tiny's pcln at 1 and pcfile at 4, then the inline
	// index at 9 (0 in [0, 8), -1 after) and main.a's pcln at 14.
	b = append(b, 0, 22, 16, 0, 2, 16, 0, 0, 0, 2, 8, 1, 8, 0, 62, 8, 39, 8, 0)
	ft := len(b)
	for _, v := range []uint32{0, 20, 16, 92, 32} {
		b = le.AppendUint32(b, v)
	}
	// main.a: 44 bytes of _func, 3 pcdata, 4 funcdata.
	for _, v := range []uint32{0, 0, 0, 0, 0, 4, 14, 3, 0, 0} {
		b = le.AppendUint32(b, v)
	}
	b = append(b, 0, 0, 0, 4) // funcID, flag, pad, nfuncdata
	for _, v := range []uint32{0, 0, 9, ^uint32(0), ^uint32(0), ^uint32(0), 0} {
		b = le.AppendUint32(b, v)
	}
	// main.b.
	for _, v := range []uint32{16, 7, 0, 0, 0, 4, 1, 0, 0, 0, 0} {
		b = le.AppendUint32(b, v)
	}
	for i, v := range []uint64{2, 1, 0x401000, 72, 86, 90, 95, uint64(ft)} {
		le.PutUint64(b[8+8*i:], v)
	}
	// go:func.*: one inlinedCall: main.b, parentPc 12, startLine 29.
	g := []byte{0, 0, 0, 0}
	g = le.AppendUint32(g, 7)
	g = le.AppendUint32(g, 12)
	g = le.AppendUint32(g, 29)
	return b, g
}

func TestGopclntabInlineTiny(t *testing.T) {
	data, gofunc := inlinePclntab()
	p, err := ParseGopclntab(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fr := p.Lines(0x401003); fr != nil {
		t.Fatalf("inlined code without go:func.*: %+v, want no frame", fr)
	}
	p.SetGoFunc(gofunc)
	want := map[uint64]string{
		0x401003: "[{main.b 0 0 false false a.go 30  true} {main.a 0 0 false false a.go 10  false}]",
		0x401009: "[{main.a 0 0 false false a.go 10  false}]",
		0x401011: "[{main.b 0 0 false false a.go 10  false}]",
	}
	for pc, w := range want {
		if got := fmt.Sprint(p.Lines(pc)); got != w {
			t.Errorf("%#x: %s, want %s", pc, got, w)
		}
	}
	// Hostile trees: a parent pc outside the function, a parent that
	// is inlined again (a loop), an entry past the tree's end.
	for name, g := range map[string][]byte{
		"parent outside": func() []byte {
			c := append([]byte(nil), gofunc...)
			binary.LittleEndian.PutUint32(c[8:], 1000)
			return c
		}(),
		"loop":  func() []byte { c := append([]byte(nil), gofunc...); binary.LittleEndian.PutUint32(c[8:], 3); return c }(),
		"short": gofunc[:10],
		"bad name": func() []byte {
			c := append([]byte(nil), gofunc...)
			binary.LittleEndian.PutUint32(c[4:], 1<<30)
			return c
		}(),
	} {
		p, _ := ParseGopclntab(data, 0)
		p.SetGoFunc(g)
		if fr := p.Lines(0x401003); fr != nil {
			t.Errorf("%s: %+v, want no frame", name, fr)
		}
	}
	// Every truncation parses or fails without panicking.
	for n := range data {
		if p, err := ParseGopclntab(data[:n], 0); err == nil {
			p.SetGoFunc(gofunc)
			p.Lines(0x401003)
		}
	}
}

func FuzzGopclntabInline(f *testing.F) {
	data, gofunc := inlinePclntab()
	f.Add(data, gofunc, uint64(0x401003))
	f.Fuzz(func(t *testing.T, data, gofunc []byte, pc uint64) {
		p, err := ParseGopclntab(data, 0)
		if err != nil {
			return
		}
		p.SetGoFunc(gofunc)
		for _, a := range []uint64{pc, 0x401000, 0x401003, 0x401009, 0x401011} {
			if fr := p.Lines(a); len(fr) > maxInlineDepth+1 {
				t.Fatalf("%d frames", len(fr))
			}
		}
	})
}

// TestInlineFuzzSeeds keeps the committed seeds in step with the code that
// makes them: it fails when testdata lacks them (run with
// MACPROF_WRITE_SEEDS=1 to write them).
func TestInlineFuzzSeeds(t *testing.T) {
	data, gofunc := inlinePclntab()
	seed := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n[]byte(%q)\nuint64(%#x)\n", data, gofunc, uint64(0x401003))
	path := filepath.Join("testdata", "fuzz", "FuzzGopclntabInline", "tiny")
	if os.Getenv("MACPROF_WRITE_SEEDS") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(seed), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != seed {
		t.Fatalf("seed %s is missing or stale (%v): MACPROF_WRITE_SEEDS=1 go test -run TestInlineFuzzSeeds ./symcache", path, err)
	}
}
