package exporter_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/macprof/macprof/exporter"
)

// TestGzipReusesItsWriter: what Gzip writes gunzips to what was given, a
// writer's error comes back, and after the first call a call allocates far
// less than a new gzip writer's tables (about 800 KB at the default level).
func TestGzipReusesItsWriter(t *testing.T) {
	data := []byte(strings.Repeat("samples of a window ", 2000))
	gzipped := func() []byte {
		var buf bytes.Buffer
		if err := exporter.Gzip(&buf, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	zr, err := gzip.NewReader(bytes.NewReader(gzipped()))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("gunzipped %d bytes (%v), want the %d written", len(got), err, len(data))
	}
	bad := errors.New("bad write")
	if err := exporter.Gzip(io.Discard, func(io.Writer) error { return bad }); !errors.Is(err, bad) {
		t.Errorf("error %v, want the writer's", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const calls = 10
	for range calls {
		gzipped()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / calls; per > 200<<10 {
		t.Errorf("a Gzip call allocated %d KiB, want less than 200 KiB (the writer reused)", per>>10)
	}
}
