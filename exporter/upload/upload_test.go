package upload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
)

// fakeSink fails while down is set, and records what it received.
type fakeSink struct {
	mu       sync.Mutex
	down     bool
	err      error // returned while down (default: a plain error)
	got      []string
	attempts []time.Time
	delay    time.Duration
}

func (f *fakeSink) Send(ctx context.Context, it *Item) error {
	f.mu.Lock()
	f.attempts = append(f.attempts, time.Now())
	down, err, delay := f.down, f.err, f.delay
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if down {
		if err == nil {
			err = errors.New("collector unavailable")
		}
		return err
	}
	f.mu.Lock()
	f.got = append(f.got, string(it.Data))
	f.mu.Unlock()
	return nil
}

func (f *fakeSink) setDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

func (f *fakeSink) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

func quietLogger(buf *bytes.Buffer) *slog.Logger {
	if buf == nil {
		buf = &bytes.Buffer{}
	}
	return slog.New(slog.NewTextHandler(&lockedWriter{w: buf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func fastConfig() Config {
	return Config{Name: "test", MaxItems: 10, InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, Logger: quietLogger(nil)}
}

// privateDir returns a new directory of the test's user with mode 0700,
// as a spool directory's parent (the agent's --spool-dir) must be, by its
// real path (macOS's temporary directories are under the link /var).
func privateDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func items(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "window-" + strconv.Itoa(i)
	}
	return out
}

// An outage shorter than the buffer loses nothing, and order is kept.
func TestOutageWithinBound(t *testing.T) {
	sink := &fakeSink{down: true}
	u, err := New(sink, fastConfig())
	if err != nil {
		t.Fatal(err)
	}
	want := items(10)
	for _, s := range want {
		if err := u.Enqueue([]byte(s), nil); err != nil {
			t.Fatal(err)
		}
	}
	testprog.WaitFor(t, 5*time.Second, func() bool { return u.Stats().Failed >= 3 }, "a few failed attempts")
	st := u.Stats()
	if st.QueueItems != 10 || st.QueueBytes != int64(len(strings.Join(want, ""))) || st.Sent != 0 {
		t.Errorf("during the outage: %+v", st)
	}
	sink.setDown(false)
	testprog.WaitFor(t, 5*time.Second, func() bool { return u.Stats().Sent == 10 }, "all items sent")
	if got := sink.received(); !slices.Equal(got, want) {
		t.Errorf("received %q, want %q", got, want)
	}
	st = u.Stats()
	if st.Dropped != 0 || st.QueueItems != 0 || st.QueueBytes != 0 || st.Rejected != 0 {
		t.Errorf("after recovery: %+v", st)
	}
	if err := u.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Beyond the bound the oldest items are dropped and counted; the newest
// survive.
func TestOutageBeyondBound(t *testing.T) {
	sink := &fakeSink{down: true}
	cfg := fastConfig()
	cfg.MaxItems = 4
	u, err := New(sink, cfg)
	if err != nil {
		t.Fatal(err)
	}
	all := items(25)
	for _, s := range all {
		u.Enqueue([]byte(s), nil)
		if st := u.Stats(); st.QueueItems > 4 {
			t.Fatalf("queue holds %d items, bound 4", st.QueueItems)
		}
	}
	if st := u.Stats(); st.Dropped != 21 {
		t.Errorf("dropped %d, want 21", st.Dropped)
	}
	sink.setDown(false)
	testprog.WaitFor(t, 5*time.Second, func() bool { return u.Stats().QueueItems == 0 }, "the queue to drain")
	got := sink.received()
	// An older item may have been in flight (being retried) when the
	// queue overflowed, and in-flight items are not dropped: then it
	// survives instead of window-21. Which one depends on where the
	// retries stood.
	if len(got) != 4 || !slices.Equal(got[1:], all[22:]) || !slices.Contains(all[:22], got[0]) {
		t.Errorf("received %q, want the 4 newest", got)
	}
	u.Shutdown(context.Background())
}

func TestByteBound(t *testing.T) {
	sink := &fakeSink{down: true}
	cfg := fastConfig()
	cfg.MaxBytes = 1000
	u, err := New(sink, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		u.Enqueue(bytes.Repeat([]byte{byte('a' + i)}, 300), nil)
		if st := u.Stats(); st.QueueBytes > 1000 {
			t.Fatalf("queue holds %d bytes, bound 1000", st.QueueBytes)
		}
	}
	// Larger than the whole bound: dropped at once.
	u.Enqueue(make([]byte, 1001), nil)
	st := u.Stats()
	if st.QueueItems != 3 || st.Dropped != 8 {
		t.Errorf("%+v, want 3 queued and 8 dropped", st)
	}
	u.Shutdown(ctxTimeout(t, 10*time.Millisecond))
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

type permanentErr struct{}

func (permanentErr) Error() string   { return "bad request" }
func (permanentErr) Permanent() bool { return true }

type retryAfterErr struct{ d time.Duration }

func (e retryAfterErr) Error() string             { return "slow down" }
func (e retryAfterErr) RetryAfter() time.Duration { return e.d }

func TestPermanentErrorNotRetried(t *testing.T) {
	sink := &fakeSink{down: true, err: fmt.Errorf("wrapped: %w", permanentErr{})}
	var logs bytes.Buffer
	cfg := fastConfig()
	cfg.Logger = quietLogger(&logs)
	u, _ := New(sink, cfg)
	u.Enqueue([]byte("x"), nil)
	testprog.WaitFor(t, 5*time.Second, func() bool { return u.Stats().Rejected == 1 }, "rejection")
	time.Sleep(50 * time.Millisecond)
	st := u.Stats()
	if st.Failed != 1 || st.QueueItems != 0 || st.Sent != 0 {
		t.Errorf("%+v: want one attempt, nothing queued", st)
	}
	if !strings.Contains(logs.String(), "rejected") {
		t.Errorf("no log of the rejection: %s", logs.String())
	}
	u.Shutdown(context.Background())
}

func TestBackoffAndRetryAfter(t *testing.T) {
	sink := &fakeSink{down: true}
	cfg := fastConfig()
	cfg.InitialBackoff = 20 * time.Millisecond
	cfg.MaxBackoff = 100 * time.Millisecond
	cfg.Jitter = -1 // no jitter: exact delays
	u, _ := New(sink, cfg)
	u.Enqueue([]byte("x"), nil)
	testprog.WaitFor(t, 5*time.Second, func() bool { return u.Stats().Failed >= 6 }, "6 attempts")
	sink.mu.Lock()
	at := slices.Clone(sink.attempts[:6])
	sink.err = retryAfterErr{300 * time.Millisecond}
	sink.mu.Unlock()
	want := []time.Duration{20, 40, 80, 100, 100}
	for i, w := range want {
		gap := at[i+1].Sub(at[i])
		w *= time.Millisecond
		// Never sooner than the backoff; later by what a loaded machine
		// adds, but within 150 ms, which still tells gap 4 from the 320 ms
		// it would be without the cap.
		if gap < w || gap > w+150*time.Millisecond {
			t.Errorf("gap %d: %v, want %v", i, gap, w)
		}
	}
	// A server's Retry-After longer than the backoff wins.
	n := u.Stats().Failed
	testprog.WaitFor(t, 5*time.Second, func() bool { return u.Stats().Failed >= n+3 }, "two retry-after attempts")
	sink.mu.Lock()
	last := sink.attempts[len(sink.attempts)-2:]
	gap := last[1].Sub(last[0])
	sink.mu.Unlock()
	if gap < 300*time.Millisecond {
		t.Errorf("retry after %v, server asked for 300ms", gap)
	}
	u.Shutdown(ctxTimeout(t, 10*time.Millisecond))
}

func TestJitterSpreadsDelays(t *testing.T) {
	u := &Uploader{cfg: Config{Jitter: 0.2}}
	seen := map[time.Duration]bool{}
	for i := 0; i < 100; i++ {
		d := u.jittered(time.Second)
		if d < 800*time.Millisecond || d > 1200*time.Millisecond {
			t.Fatalf("jittered 1s to %v", d)
		}
		seen[d] = true
	}
	if len(seen) < 50 {
		t.Errorf("only %d distinct delays in 100", len(seen))
	}
}

func TestShutdownFlushes(t *testing.T) {
	sink := &fakeSink{delay: 5 * time.Millisecond}
	u, _ := New(sink, fastConfig())
	for _, s := range items(8) {
		u.Enqueue([]byte(s), nil)
	}
	if err := u.Shutdown(ctxTimeout(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := sink.received(); !slices.Equal(got, items(8)) {
		t.Errorf("received %q", got)
	}
	if err := u.Enqueue([]byte("late"), nil); err == nil {
		t.Error("enqueue after shutdown accepted")
	}
	if st := u.Stats(); st.Sent != 8 || st.Dropped != 1 {
		t.Errorf("%+v", st)
	}
}

func TestShutdownDeadlineWithoutSpool(t *testing.T) {
	sink := &fakeSink{down: true}
	u, _ := New(sink, fastConfig())
	for _, s := range items(3) {
		u.Enqueue([]byte(s), nil)
	}
	start := time.Now()
	err := u.Shutdown(ctxTimeout(t, 100*time.Millisecond))
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("shutdown with the sink down: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("shutdown took %v with a 100ms deadline", d)
	}
	if st := u.Stats(); st.Dropped != 3 || st.QueueItems != 0 {
		t.Errorf("%+v: want the 3 items dropped", st)
	}
}

// A send that hangs does not hold Shutdown past its deadline.
func TestShutdownDeadlineWithHungSend(t *testing.T) {
	sink := &fakeSink{delay: time.Hour}
	cfg := fastConfig()
	cfg.AttemptTimeout = time.Hour
	u, _ := New(sink, cfg)
	u.Enqueue([]byte("x"), nil)
	testprog.WaitFor(t, time.Second, func() bool {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return len(sink.attempts) > 0
	}, "the send to start")
	start := time.Now()
	if err := u.Shutdown(ctxTimeout(t, 100*time.Millisecond)); err == nil {
		t.Error("shutdown with a hung send returned nil")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("shutdown took %v", d)
	}
}

// Items survive a restart through the spool directory, and corrupt files
// are skipped with a log.
func TestSpoolSurvivesRestart(t *testing.T) {
	dir := filepath.Join(privateDir(t), "spool") // created 0700 by New
	sink := &fakeSink{down: true}
	cfg := fastConfig()
	cfg.SpoolDir = dir
	u, err := New(sink, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := items(5)
	for i, s := range want {
		u.Enqueue([]byte(s), map[string]string{"from": strconv.Itoa(100 + i)})
	}
	if err := u.Shutdown(ctxTimeout(t, 50*time.Millisecond)); err == nil {
		t.Fatal("shutdown with the sink down returned nil")
	}
	if st := u.Stats(); st.Dropped != 0 {
		t.Errorf("items dropped although spooled: %+v", st)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.item"))
	if len(files) != 5 {
		t.Fatalf("%d spool files, want 5", len(files))
	}
	// Damage: garbage, a flipped byte in a valid file, a leftover temp.
	os.WriteFile(filepath.Join(dir, "00000000000000000099.item"), []byte("not an item"), 0o600)
	data, _ := os.ReadFile(files[1])
	data[len(data)/2] ^= 0xff
	os.WriteFile(files[1], data, 0o600)
	os.WriteFile(filepath.Join(dir, "item-123.tmp"), []byte("half"), 0o600)

	var logs bytes.Buffer
	sink2 := &fakeSink{}
	var got []map[string]string
	var mu sync.Mutex
	cfg.Logger = quietLogger(&logs)
	u2, err := New(SinkFunc(func(ctx context.Context, it *Item) error {
		mu.Lock()
		got = append(got, it.Meta)
		mu.Unlock()
		return sink2.Send(ctx, it)
	}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := u2.Shutdown(ctxTimeout(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	wantGot := []string{want[0], want[2], want[3], want[4]}
	if r := sink2.received(); !slices.Equal(r, wantGot) {
		t.Errorf("after restart received %q, want %q", r, wantGot)
	}
	if len(got) != 4 || got[0]["from"] != "100" || got[3]["from"] != "104" {
		t.Errorf("metadata after restart: %v", got)
	}
	if st := u2.Stats(); st.Dropped != 2 {
		t.Errorf("corrupt files counted as %d dropped, want 2", st.Dropped)
	}
	if n := strings.Count(logs.String(), "skipping unreadable spooled item"); n != 2 {
		t.Errorf("%d logs of corrupt files, want 2:\n%s", n, logs.String())
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Errorf("spool not empty after sending: %v", left)
	}
	// New items continue the sequence after the loaded ones.
	u3, _ := New(&fakeSink{down: true}, cfg)
	u3.Enqueue([]byte("x"), nil)
	u3.Shutdown(ctxTimeout(t, 10*time.Millisecond))
	files, _ = filepath.Glob(filepath.Join(dir, "*.item"))
	if len(files) != 1 {
		t.Errorf("spool files %v", files)
	}
}

// A spool left by a run with larger bounds is trimmed to the newest items.
func TestSpoolBoundOnLoad(t *testing.T) {
	dir := filepath.Join(privateDir(t), "spool")
	cfg := fastConfig()
	cfg.SpoolDir = dir
	cfg.MaxItems = 20
	u, _ := New(&fakeSink{down: true}, cfg)
	for _, s := range items(20) {
		u.Enqueue([]byte(s), nil)
	}
	u.Shutdown(ctxTimeout(t, 10*time.Millisecond))
	cfg.MaxItems = 5
	sink := &fakeSink{}
	u2, err := New(sink, cfg)
	if err != nil {
		t.Fatal(err)
	}
	u2.Shutdown(ctxTimeout(t, 5*time.Second))
	if got := sink.received(); !slices.Equal(got, items(20)[15:]) {
		t.Errorf("received %q, want the 5 newest", got)
	}
	if st := u2.Stats(); st.Dropped != 15 {
		t.Errorf("dropped %d, want 15", st.Dropped)
	}
}

func TestItemEncoding(t *testing.T) {
	it := &Item{Data: []byte("payload"), Meta: map[string]string{"a": "1", "until": "99"}, Created: time.Unix(0, 12345)}
	data, err := encodeItem(it)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeItem(data)
	if err != nil {
		t.Fatal(err)
	}
	if string(back.Data) != "payload" || back.Meta["until"] != "99" || back.Meta["a"] != "1" || !back.Created.Equal(it.Created) {
		t.Errorf("round trip: %+v", back)
	}
	for i := range data {
		if _, err := decodeItem(data[:i]); err == nil {
			t.Errorf("truncated to %d bytes: accepted", i)
		}
	}
}

func FuzzDecodeItem(f *testing.F) {
	good, _ := encodeItem(&Item{Data: []byte("abc"), Meta: map[string]string{"k": "v"}})
	f.Add(good)
	f.Add([]byte(spoolMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		it, err := decodeItem(data)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to the same bytes.
		again, err := encodeItem(it)
		if err != nil {
			t.Fatalf("re-encoding a decoded item: %v", err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("re-encoded item differs")
		}
	})
}

func TestConcurrentEnqueue(t *testing.T) {
	sink := &fakeSink{}
	cfg := fastConfig()
	cfg.MaxItems = 1000
	cfg.SpoolDir = filepath.Join(privateDir(t), "spool")
	u, _ := New(sink, cfg)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				u.Enqueue([]byte(fmt.Sprintf("%d-%d", g, i)), nil)
				_ = u.Stats()
			}
		}()
	}
	wg.Wait()
	if err := u.Shutdown(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if st := u.Stats(); st.Sent != 200 || st.Dropped != 0 {
		t.Errorf("%+v", st)
	}
}

// The first failed send is logged at WARN at once, with its reason; later
// failures at most once per WarnEvery, with how many were not logged; and
// recovery is logged.
func TestFailuresLoggedLoudlyThenLimited(t *testing.T) {
	var buf bytes.Buffer
	lw := &lockedWriter{w: &buf}
	cfg := fastConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(lw, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg.WarnEvery = 300 * time.Millisecond
	sink := &fakeSink{down: true, err: errors.New("connection refused")}
	u, err := New(sink, cfg)
	if err != nil {
		t.Fatal(err)
	}
	logged := func() string {
		lw.mu.Lock()
		defer lw.mu.Unlock()
		return buf.String()
	}
	start := time.Now()
	u.Enqueue([]byte("w"), nil)
	testprog.WaitFor(t, 5*time.Second, func() bool { return strings.Contains(logged(), "level=WARN") }, "the first WARN")
	if d := time.Since(start); d > time.Second {
		t.Errorf("first WARN after %v", d)
	}
	if l := logged(); !strings.Contains(l, "connection refused") || !strings.Contains(l, "uploader=test") {
		t.Errorf("first WARN lacks the reason or the uploader: %s", l)
	}
	time.Sleep(time.Second)
	sink.setDown(false)
	testprog.WaitFor(t, 5*time.Second, func() bool { return len(sink.received()) == 1 }, "recovery")
	if err := u.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	l := logged()
	warns := strings.Count(l, "level=WARN")
	elapsed := time.Since(start)
	failed := u.Stats().Failed
	if max := int(elapsed/cfg.WarnEvery) + 1; warns < 2 || warns > max || int64(warns) >= failed {
		t.Errorf("%d WARN lines for %d failures in %v (want between 2 and %d):\n%s", warns, failed, elapsed, max, l)
	}
	if !strings.Contains(l, "failures_not_logged=") || !strings.Contains(l, "upload: sending again") {
		t.Errorf("log lacks the held-back count or the recovery:\n%s", l)
	}
}
