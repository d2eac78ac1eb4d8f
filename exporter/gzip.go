package exporter

import (
	"compress/gzip"
	"io"
	"sync"
)

// gz is one gzip writer at BestSpeed that every export reuses: a new writer
// at the default level allocates its compressor's tables, about 800 KB
// faulted in page by page, for a profile of a few KiB, and that, more than
// the compression, was the gzip part of an agent's export.
var gz struct {
	sync.Mutex
	w *gzip.Writer
}

// Gzip writes to dst, gzipped, what write writes to the writer it is given.
// Calls take turns.
func Gzip(dst io.Writer, write func(io.Writer) error) error {
	gz.Lock()
	defer gz.Unlock()
	if gz.w == nil {
		w, err := gzip.NewWriterLevel(dst, gzip.BestSpeed)
		if err != nil {
			return err
		}
		gz.w = w
	} else {
		gz.w.Reset(dst)
	}
	// Let go of dst (a BestSpeed reset is cheap: no tables cleared).
	defer gz.w.Reset(io.Discard)
	if err := write(gz.w); err != nil {
		return err
	}
	return gz.w.Close()
}
