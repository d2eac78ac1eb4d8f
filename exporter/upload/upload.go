// Package upload delivers encoded profiles to a sink (an OTLP collector,
// Pyroscope) from a bounded queue, optionally spooled to disk, retrying
// with backoff, so that a slow or absent sink neither blocks profiling nor
// grows memory without bound.
package upload

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Item is one encoded payload and what the sink needs to send it.
type Item struct {
	// Data is the encoded payload (an OTLP request, a pprof profile).
	Data []byte
	// Meta carries small sink-specific fields (Pyroscope's from/until).
	Meta map[string]string
	// Created is when the item was enqueued.
	Created time.Time

	seq  uint64 // queue order, also the spool file's name
	size int64
}

// Sink sends one item. Its error tells whether to retry: an error with a
// method Permanent() bool returning true drops the item (counted as
// rejected); an error with RetryAfter() time.Duration sets the next delay
// when longer than the backoff. Every other error is retried.
type Sink interface {
	Send(ctx context.Context, it *Item) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(ctx context.Context, it *Item) error

// Send calls f.
func (f SinkFunc) Send(ctx context.Context, it *Item) error { return f(ctx, it) }

// Config configures an Uploader. Zero fields take the defaults.
type Config struct {
	// Name identifies the uploader in logs ("otlp", "pyroscope").
	Name string
	// MaxItems bounds the queue's length (default 64, at least 2).
	MaxItems int
	// MaxBytes bounds the queue's payload bytes (default 64 MiB), plus at
	// most the item in flight, which is never dropped from under the sink.
	// An item larger than this on its own is dropped at once.
	MaxBytes int64
	// SpoolDir, when set, keeps every queued item in a file there as well,
	// so that a restarted agent sends what the previous one could not. It
	// and the directory holding it (the agent's --spool-dir) must be the
	// user's own, mode 0700, reached through no symbolic link; New creates
	// them where no one else can write.
	SpoolDir string
	// InitialBackoff is the first retry delay (default 1 s); it doubles up
	// to MaxBackoff (default 1 min). Jitter (default 0.2) spreads each delay
	// by ±that fraction; a negative Jitter, or one of 1 or more, disables
	// it.
	InitialBackoff, MaxBackoff time.Duration
	Jitter                     float64
	// AttemptTimeout bounds one send (default 30 s).
	AttemptTimeout time.Duration
	// Logger receives warnings (default slog.Default()).
	Logger *slog.Logger
	// WarnEvery bounds how often failures are logged at WARN (default 1
	// min): the first failed send is logged at once with its reason, later
	// ones at most once per WarnEvery, with how many failed in between.
	WarnEvery time.Duration
}

func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = "upload"
	}
	if c.MaxItems <= 0 {
		c.MaxItems = 64
	}
	if c.MaxItems < 2 {
		c.MaxItems = 2
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = 64 << 20
	}
	if c.InitialBackoff <= 0 {
		c.InitialBackoff = time.Second
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = time.Minute
	}
	if c.MaxBackoff < c.InitialBackoff {
		c.MaxBackoff = c.InitialBackoff
	}
	if c.Jitter < 0 || c.Jitter >= 1 {
		c.Jitter = 0
	} else if c.Jitter == 0 {
		c.Jitter = 0.2
	}
	if c.AttemptTimeout <= 0 {
		c.AttemptTimeout = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.WarnEvery <= 0 {
		c.WarnEvery = time.Minute
	}
	return c
}

// Stats are the uploader's counters. Sent, Failed, Dropped and Rejected
// only grow; QueueItems and QueueBytes are the current depth.
type Stats struct {
	// Sent counts items the sink accepted.
	Sent int64
	// Failed counts failed send attempts (an item retried 3 times and then
	// sent counts 3 here and 1 in Sent).
	Failed int64
	// Dropped counts items dropped because the queue was full (or the item
	// alone exceeded MaxBytes, or Shutdown's deadline passed without a
	// spool to keep them).
	Dropped int64
	// Rejected counts items the sink refused permanently.
	Rejected int64
	// QueueItems and QueueBytes describe what waits, in-flight included.
	QueueItems int64
	QueueBytes int64
}

// Uploader queues items and sends them from one goroutine, oldest first.
type Uploader struct {
	cfg   Config
	sink  Sink
	spool *spool

	mu      sync.Mutex
	queue   []*Item // oldest first; queue[0] may be in flight
	bytes   int64
	flying  *Item // the item being sent, still in queue
	nextSeq uint64
	closed  bool

	runCtx    context.Context // cancelled when Shutdown's deadline passes
	cancelRun context.CancelFunc

	wake     chan struct{} // an item arrived
	stop     chan struct{} // Shutdown began
	done     chan struct{} // the sender exited
	stopOnce sync.Once

	sent, failed, dropped, rejected atomic.Int64

	failWarn, dropWarn warnLimiter
	failing            atomic.Bool // the last send failed
}

// warnLimiter lets a warning through at once, then at most once per
// interval, counting the ones it held back.
type warnLimiter struct {
	mu     sync.Mutex
	last   time.Time
	held   int64
	warned bool
}

// allow reports whether to warn now, and how many warnings were held back
// since the last one.
func (l *warnLimiter) allow(now time.Time, every time.Duration) (bool, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.warned && now.Sub(l.last) < every {
		l.held++
		return false, 0
	}
	held := l.held
	l.warned, l.last, l.held = true, now, 0
	return true, held
}

// New returns a running Uploader sending to sink. With a spool directory it
// first loads what a previous run left there (oldest first, bounded as
// usual; unreadable files are logged and removed).
func New(sink Sink, cfg Config) (*Uploader, error) {
	if sink == nil {
		return nil, errors.New("upload: nil sink")
	}
	cfg = cfg.withDefaults()
	u := &Uploader{
		cfg:  cfg,
		sink: sink,
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	u.runCtx, u.cancelRun = context.WithCancel(context.Background())
	if cfg.SpoolDir != "" {
		sp, items, skipped, err := openSpool(cfg.SpoolDir, cfg.MaxItems, cfg.MaxBytes, cfg.Logger.With("uploader", cfg.Name))
		if err != nil {
			return nil, err
		}
		u.spool = sp
		u.dropped.Add(int64(skipped))
		for _, it := range items {
			u.push(it)
			if it.seq >= u.nextSeq {
				u.nextSeq = it.seq + 1
			}
		}
		if len(items) > 0 {
			cfg.Logger.Info("upload: resuming spooled items", "uploader", cfg.Name, "items", len(u.queue), "dir", cfg.SpoolDir)
		}
	}
	go u.run()
	return u, nil
}

// Enqueue adds an item (its Data is not copied: do not modify it after).
// When the queue is full the oldest waiting items are dropped to make room.
// It never blocks on the sink. After Shutdown began, items are refused
// (counted as dropped) and an error is returned.
func (u *Uploader) Enqueue(data []byte, meta map[string]string) error {
	it := &Item{Data: data, Meta: meta, Created: time.Now(), size: int64(len(data))}
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		u.dropped.Add(1)
		return fmt.Errorf("upload: %s: shut down, item dropped", u.cfg.Name)
	}
	it.seq = u.nextSeq
	u.nextSeq++
	u.mu.Unlock()
	if u.spool != nil {
		// Written before queueing, outside the lock: a slow disk does not
		// hold up the sender.
		if err := u.spool.write(it); err != nil {
			u.cfg.Logger.Warn("upload: cannot spool item, keeping it in memory only", "uploader", u.cfg.Name, "err", err)
		}
	}
	u.mu.Lock()
	dropped := u.push(it)
	u.mu.Unlock()
	if dropped > 0 {
		if ok, _ := u.dropWarn.allow(time.Now(), u.cfg.WarnEvery); ok {
			u.cfg.Logger.Warn("upload: queue full, dropped oldest items", "uploader", u.cfg.Name, "dropped", dropped, "total_dropped", u.dropped.Load())
		}
	}
	select {
	case u.wake <- struct{}{}:
	default:
	}
	return nil
}

// push appends it, dropping the oldest items that are not in flight until
// the bounds hold. It returns how many were dropped. Called with u.mu held
// (or before the sender starts).
func (u *Uploader) push(it *Item) int {
	if it.size > u.cfg.MaxBytes {
		u.dropped.Add(1)
		u.removeSpooled(it)
		return 1
	}
	u.queue = append(u.queue, it)
	u.bytes += it.size
	n := 0
	for len(u.queue) > u.cfg.MaxItems || u.bytes > u.cfg.MaxBytes {
		i := 0
		if u.queue[0] == u.flying {
			i = 1
		}
		if i >= len(u.queue)-1 {
			break // only the in-flight item and the new one are left
		}
		old := u.queue[i]
		u.queue = append(u.queue[:i], u.queue[i+1:]...)
		u.bytes -= old.size
		u.dropped.Add(1)
		u.removeSpooled(old)
		n++
	}
	return n
}

func (u *Uploader) removeSpooled(it *Item) {
	if u.spool != nil {
		u.spool.remove(it)
	}
}

// Stats returns the counters.
func (u *Uploader) Stats() Stats {
	u.mu.Lock()
	items, bytes := int64(len(u.queue)), u.bytes
	u.mu.Unlock()
	return Stats{
		Sent:       u.sent.Load(),
		Failed:     u.failed.Load(),
		Dropped:    u.dropped.Load(),
		Rejected:   u.rejected.Load(),
		QueueItems: items,
		QueueBytes: bytes,
	}
}

// head returns the oldest item and marks it in flight, or nil.
func (u *Uploader) head() *Item {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.queue) == 0 {
		return nil
	}
	u.flying = u.queue[0]
	return u.flying
}

// finish removes the in-flight item after a final outcome.
func (u *Uploader) finish(it *Item) {
	u.mu.Lock()
	if len(u.queue) > 0 && u.queue[0] == it {
		u.queue = u.queue[1:]
		u.bytes -= it.size
	}
	u.flying = nil
	u.mu.Unlock()
	u.removeSpooled(it)
}

// release marks the in-flight item as waiting again (it stays first).
func (u *Uploader) release() {
	u.mu.Lock()
	u.flying = nil
	u.mu.Unlock()
}

// run is the sender loop.
func (u *Uploader) run() {
	defer close(u.done)
	backoff := time.Duration(0)
	for {
		it := u.head()
		if it == nil {
			select {
			case <-u.wake:
				continue
			case <-u.stop:
				return
			}
		}
		err := u.attempt(u.runCtx, it)
		if err == nil {
			backoff = 0
			continue
		}
		if err == errPermanent {
			continue
		}
		// Retry after a backoff, unless shutting down: Shutdown's own loop
		// takes over then.
		backoff = u.nextBackoff(backoff)
		delay := u.jittered(backoff)
		var ra interface{ RetryAfter() time.Duration }
		if errors.As(err, &ra) && ra.RetryAfter() > delay {
			delay = ra.RetryAfter()
		}
		u.release()
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-u.stop:
			t.Stop()
			return
		}
	}
}

var errPermanent = errors.New("permanent")

// attempt sends it once and settles it on success or permanent failure.
func (u *Uploader) attempt(ctx context.Context, it *Item) error {
	ctx, cancel := context.WithTimeout(ctx, u.cfg.AttemptTimeout)
	err := u.sink.Send(ctx, it)
	cancel()
	if err == nil {
		u.sent.Add(1)
		u.finish(it)
		if u.failing.Swap(false) {
			u.cfg.Logger.Info("upload: sending again", "uploader", u.cfg.Name, "sent", u.sent.Load(), "failed_attempts", u.failed.Load())
		}
		return nil
	}
	u.failed.Add(1)
	u.failing.Store(true)
	var p interface{ Permanent() bool }
	permanent := errors.As(err, &p) && p.Permanent()
	msg := "upload: send failed, will retry"
	if permanent {
		msg = "upload: item rejected, not retried"
	}
	if ok, held := u.failWarn.allow(time.Now(), u.cfg.WarnEvery); ok {
		u.cfg.Logger.Warn(msg, "uploader", u.cfg.Name, "err", err, "failed_attempts", u.failed.Load(),
			"sent", u.sent.Load(), "failures_not_logged", held)
	} else {
		u.cfg.Logger.Debug(msg, "uploader", u.cfg.Name, "err", err)
	}
	if permanent {
		u.rejected.Add(1)
		u.finish(it)
		return errPermanent
	}
	return err
}

func (u *Uploader) nextBackoff(prev time.Duration) time.Duration {
	next := u.cfg.InitialBackoff
	if prev > 0 {
		next = min(prev*2, u.cfg.MaxBackoff)
	}
	return next
}

// jittered spreads d by ±Jitter.
func (u *Uploader) jittered(d time.Duration) time.Duration {
	if u.cfg.Jitter == 0 {
		return d
	}
	f := 1 + u.cfg.Jitter*(2*rand.Float64()-1)
	return time.Duration(float64(d) * f)
}

// Shutdown stops accepting items and tries to send everything queued
// before ctx ends, retrying failures with the usual backoff. What is left
// when ctx ends stays in the spool directory for the next run, or, without
// one, is dropped and counted. It returns ctx's error when items were left.
func (u *Uploader) Shutdown(ctx context.Context) error {
	u.mu.Lock()
	u.closed = true
	u.mu.Unlock()
	u.stopOnce.Do(func() { close(u.stop) })
	// The sender loop exits at its next wait; a send in progress may finish
	// until ctx ends, then it is cancelled (and its item sent again below
	// or kept).
	select {
	case <-u.done:
	case <-ctx.Done():
		u.cancelRun()
		<-u.done
	}
	defer u.cancelRun()
	backoff := time.Duration(0)
	for {
		it := u.head()
		if it == nil {
			return nil
		}
		if ctx.Err() != nil {
			break
		}
		err := u.attempt(ctx, it)
		if err == nil || err == errPermanent {
			backoff = 0
			continue
		}
		u.release()
		backoff = u.nextBackoff(backoff)
		t := time.NewTimer(u.jittered(backoff))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	u.mu.Lock()
	left := len(u.queue)
	u.mu.Unlock()
	if u.spool != nil {
		u.cfg.Logger.Warn("upload: shutdown deadline passed, items kept in the spool for the next run", "uploader", u.cfg.Name, "items", left, "dir", u.cfg.SpoolDir)
	} else {
		u.mu.Lock()
		u.queue, u.bytes = nil, 0
		u.mu.Unlock()
		u.dropped.Add(int64(left))
		u.cfg.Logger.Warn("upload: shutdown deadline passed, items dropped", "uploader", u.cfg.Name, "items", left)
	}
	return fmt.Errorf("upload: %s: %d items not sent: %w", u.cfg.Name, left, ctx.Err())
}
