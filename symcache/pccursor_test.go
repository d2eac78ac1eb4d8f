package symcache

import (
	"math/rand/v2"
	"testing"
)

// TestPCCursorAsPCValue checks that a pcCursor answers as pcvalue, which
// walks from the entry every time, on random tables (well-formed deltas,
// multi-byte varints, zero ends, truncated and overlong varints) and pcs
// in random order, so that its kept place and one-byte fast path never
// change an answer.
func TestPCCursorAsPCValue(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const entry = 0x1000
	for range 50_000 {
		tab := make([]byte, r.IntN(40))
		for i := range tab {
			switch r.IntN(5) {
			case 0:
				tab[i] = byte(r.IntN(256))
			case 1:
				tab[i] = 0x80 | byte(r.IntN(128)) // a varint goes on
			case 2:
				tab[i] = 0
			default:
				tab[i] = byte(r.IntN(8))
			}
		}
		g := &Gopclntab{pctab: tab, quantum: uint32(1 + 3*r.IntN(2))}
		var c pcCursor
		c.start(g, 0, entry, true)
		for range 20 {
			pc := entry - 4 + uint64(r.IntN(300))
			got, gotOK := c.value(pc)
			want, wantOK := g.pcvalue(0, entry, pc)
			if got != want || gotOK != wantOK {
				t.Fatalf("table %x, pc %#x: cursor %d, %v; pcvalue %d, %v", tab, pc, got, gotOK, want, wantOK)
			}
		}
	}
}
