package images

import (
	"errors"
	"math/rand"
	"slices"
	"testing"
)

// decodeStartsSlowly is DecodeFunctionStarts without its fast paths for
// one- and two-byte deltas: each ULEB128 read a byte at a time.
func decodeStartsSlowly(b []byte, base, limit uint64) ([]uint64, error) {
	var dst []uint64
	addr := base
	for i := 0; i < len(b); {
		start := i
		var delta uint64
		var shift uint
		for {
			if i >= len(b) {
				return dst, formatError(uint64(start), nil, "truncated")
			}
			c := b[i]
			i++
			if shift > 63 || (shift == 63 && c&0x7e != 0) {
				return dst, formatError(uint64(start), c, "overflow")
			}
			delta |= uint64(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				break
			}
		}
		if delta == 0 {
			break
		}
		if addr+delta < addr || addr+delta >= limit {
			return dst, formatError(uint64(start), delta, "outside")
		}
		addr += delta
		dst = append(dst, addr)
	}
	return dst, nil
}

// TestDecodeFunctionStartsFastPaths: DecodeFunctionStarts, whose one- and
// two-byte deltas skip the general ULEB128 loop, decodes as that loop
// alone does (the same starts, the same error at the same offset with the
// same value), on deltas of one to four bytes, zero deltas padded to
// several bytes, truncated data, starts that pass the limit and addresses
// that wrap around.
func TestDecodeFunctionStartsFastPaths(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for round := range 20000 {
		var b []byte
		for range rng.Intn(12) {
			var v uint64
			switch rng.Intn(4) {
			case 0:
				v = uint64(rng.Intn(0x80))
			case 1:
				v = uint64(rng.Intn(0x4000))
			case 2:
				v = uint64(rng.Intn(1 << 28))
			default:
				v = rng.Uint64()
			}
			for {
				c := byte(v & 0x7f)
				v >>= 7
				if v != 0 || rng.Intn(8) == 0 && len(b) > 0 {
					c |= 0x80 // padded: a zero group follows
				}
				b = append(b, c)
				if c&0x80 == 0 {
					break
				}
			}
		}
		if rng.Intn(6) == 0 && len(b) > 0 {
			b = b[:rng.Intn(len(b))] // truncated
		}
		base := uint64(0x1000)
		if round%5 == 0 {
			base = ^uint64(0) - uint64(rng.Intn(1<<15))
		}
		limit := base + uint64(rng.Int63n(1<<30))
		if round%3 == 0 || limit < base {
			limit = ^uint64(0)
		}
		want, werr := decodeStartsSlowly(b, base, limit)
		got, gerr := DecodeFunctionStarts(b, base, limit, nil)
		if !slices.Equal(got, want) || (gerr == nil) != (werr == nil) {
			t.Fatalf("% x from %#x below %#x: %#x, %v; want %#x, %v", b, base, limit, got, gerr, want, werr)
		}
		if werr != nil {
			var g, w *FormatError
			if !errors.As(gerr, &g) || !errors.As(werr, &w) || g.Off != w.Off || g.Val != w.Val {
				t.Fatalf("% x from %#x below %#x: error %#v, want %#v", b, base, limit, gerr, werr)
			}
		}
	}
}

// BenchmarkDecodeFunctionStarts decodes 80,000 starts (biome's count)
// whose deltas are spread as a large Rust binary's are: most of one or
// two bytes, a few of three.
func BenchmarkDecodeFunctionStarts(b *testing.B) {
	rng := rand.New(rand.NewSource(6))
	var data []byte
	for range 80000 {
		v := uint64(4 + 4*rng.Intn(1<<rng.Intn(14)))
		for v >= 0x80 {
			data = append(data, byte(v)|0x80)
			v >>= 7
		}
		data = append(data, byte(v))
	}
	dst := make([]uint64, 0, 80000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, err = DecodeFunctionStarts(data, 0x1000, 1<<40, dst[:0]); err != nil || len(dst) != 80000 {
			b.Fatal(len(dst), err)
		}
	}
}
