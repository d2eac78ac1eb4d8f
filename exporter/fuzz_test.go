package exporter

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"

	pprof "github.com/google/pprof/profile"

	"github.com/macprof/macprof/images"
)

// fuzzWindow decodes a window from bytes: stacks of addresses inside and
// around fakeLib, samples with any stack index, PID, thread, name and
// count. It needs no /proc, so it runs on every OS.
func fuzzWindow(data []byte) *profile.Window {
	w := &profile.Window{
		Start:     time.Unix(1_700_000_000, 0),
		End:       time.Unix(1_700_000_001, 0),
		Period:    time.Millisecond,
		Processes: []profile.Process{{PID: 1, Executable: fakeLib.Path, Images: images.NewSet([]*images.Image{fakeLib})}, {PID: 2}},
	}
	next := func() uint64 {
		if len(data) < 2 {
			data = nil
			return 0
		}
		v := binary.LittleEndian.Uint16(data)
		data = data[2:]
		return uint64(v)
	}
	for n := 0; len(data) > 0 && n < 64; n++ {
		kind := next()
		switch kind % 3 {
		case 0, 1: // a stack of up to 16 addresses
			var st profile.Stack
			for i := next() % 16; i > 0 && len(data) > 0; i-- {
				a := next()
				if a&1 == 0 {
					a += fakeLib.Start - 0x1000 // inside, or just before, the image
				}
				st.PCs = append(st.PCs, a)
			}
			st.Truncated = kind&4 != 0
			w.Stacks = append(w.Stacks, st)
		case 2:
			name := ""
			if k := next() % 4; k > 0 && len(data) >= int(k) {
				name = string(data[:k])
				data = data[k:]
			}
			w.Samples = append(w.Samples, profile.Sample{
				Stack:      int(int16(next())) % 20,
				PID:        int(next() % 4),
				Thread:     target.ThreadID(next()),
				ThreadName: name,
				Count:      int64(int16(next())),
			})
		}
	}
	return w
}

// FuzzWindow checks that inconsistent windows give an error or valid
// output in every format, never a panic.
func FuzzWindow(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		w := fuzzWindow(data)
		c := newCache()
		p, err := Profile(w, c, Options{})
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := pprof.Parse(&buf); err != nil {
			t.Fatalf("round trip: %v", err)
		}
		for _, format := range []Format{FormatFolded, FormatSVG} {
			buf.Reset()
			if err := Write(&buf, format, w, c, Options{ProcessRoot: true, ThreadRoot: true}); err != nil {
				t.Fatalf("%s: %v, but pprof succeeded", format, err)
			}
			if format == FormatSVG {
				if err := xmlWellFormed(buf.Bytes()); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := Write(io.Discard, FormatPprof, w, c, Options{}); err != nil {
			t.Fatal(err)
		}
	})
}
