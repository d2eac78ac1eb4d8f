package record

import (
	"sync"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/symcache"
)

// symbolReader reads the symbols of the images a recording's samples hit
// into the cache the outputs are written with, as the sampler meets them
// (sampler.Config.OnImagesHit), while their process lives: a darwin
// task's memory, the only place the dyld shared cache's libraries are
// read from, is gone once the command exits, and record writes after
// that. Images it could not read in time are read at export, from their
// files where the memory is gone.
type symbolReader struct {
	cache *symcache.Cache
	queue chan *images.Image
	done  chan struct{}
	once  sync.Once
}

// symbolQueue bounds the images waiting to be read; more are read at
// export.
const symbolQueue = 4096

func newSymbolReader(cache *symcache.Cache) *symbolReader {
	r := &symbolReader{cache: cache, queue: make(chan *images.Image, symbolQueue), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for im := range r.queue {
			r.cache.Table(im)
		}
	}()
	return r
}

// add queues imgs to be read; it never blocks the sampler.
func (r *symbolReader) add(_ int, imgs []*images.Image) {
	for _, im := range imgs {
		select {
		case r.queue <- im:
		default:
		}
	}
}

// finish waits for the images queued so far to be read. It may be called
// more than once; add must not be called after it.
func (r *symbolReader) finish() {
	r.once.Do(func() { close(r.queue) })
	<-r.done
}

// releaser is a target that keeps what reads its memory after Close (the
// darwin task port, for symbols read at export) until Release.
type releaser interface{ Release() error }

// releaseAll releases what closed targets kept for the export, once every
// output is written.
func (r *recording) releaseAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.ts {
		if rl, ok := t.(releaser); ok {
			rl.Release()
		}
	}
}
