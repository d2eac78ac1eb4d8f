package images

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestReadBoundedFromFiles: a range larger than a chunk is read whole from
// a file and from a section of one (the one-read path), and from a reader
// that is not a file (chunk by chunk); a range that runs past what either
// holds fails, and a reader that is not a file and holds the range's last
// byte but not the rest (a task's memory) costs what it delivered, not
// the bytes the range names.
func TestReadBoundedFromFiles(t *testing.T) {
	data := make([]byte, 3*readChunk+123)
	for i := range data {
		data[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const off, n = 100, 2*readChunk + 5
	for _, c := range []struct {
		name string
		r    io.ReaderAt
	}{
		{"file", f},
		{"section of a file", io.NewSectionReader(f, 0, int64(len(data)))},
		{"bytes", bytes.NewReader(data)},
	} {
		got, err := readBounded(c.r, off, n, "blob")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !bytes.Equal(got, data[off:off+n]) {
			t.Errorf("%s: the bytes read differ from the file's", c.name)
		}
		if _, err := readBounded(c.r, off, uint64(len(data)), "blob"); err == nil {
			t.Errorf("%s: a range past the end read without an error", c.name)
		}
	}
	if !inFile(f) || !inFile(io.NewSectionReader(f, 0, 1)) || inFile(bytes.NewReader(data)) {
		t.Error("inFile tells files from other readers wrongly")
	}
	// A task's memory, as a hostile header may name it: the first
	// chunk and the range's last byte readable, nothing between.
	holes := holeReader{head: readChunk, last: maxLinkeditBlob - 1}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := readBounded(holes, 0, maxLinkeditBlob, "blob"); err == nil {
		t.Error("a hostile size read without an error")
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("%d bytes allocated for a hostile size of %d over a reader of %d", got, maxLinkeditBlob, readChunk+1)
	}
}

// holeReader reads zeros below head and at last, and fails elsewhere.
type holeReader struct{ head, last int64 }

func (h holeReader) ReadAt(p []byte, off int64) (int, error) {
	switch {
	case off == h.last && len(p) > 0:
		p[0] = 0
		return 1, nil
	case off < h.head:
		n := min(int64(len(p)), h.head-off)
		clear(p[:n])
		if n < int64(len(p)) {
			return int(n), io.EOF
		}
		return int(n), nil
	}
	return 0, io.EOF
}
