// Package work is the Go benchmark package bench/diffstat profiles with
// `go test -bench -cpuprofile`, built twice: as it is, and with
// -ldflags=-X=example.com/work.slowdown=1.3, which makes score, about half
// the CPU time, 30% slower in its own frame.
package work

import (
	"hash/crc32"
	"sort"
	"strconv"
	"testing"
)

// slowdown scales score's rounds; a string so that -ldflags -X can set it.
var slowdown = "1"

var sink uint64

// parse formats and parses numbers, allocating as it goes, so that the
// profile has the garbage collector's work in it as real code does.
//
//go:noinline
func parse(n int) []int {
	out := make([]int, 0, n)
	for i := range n {
		s := strconv.Itoa(i*7919 + 13)
		v, _ := strconv.Atoi(s)
		out = append(out, v)
	}
	return out
}

// sortKeys sorts the parsed numbers after scrambling them.
//
//go:noinline
func sortKeys(v []int) {
	x := uint32(1)
	for i := range v {
		x = x*1103515245 + 12345
		v[i] ^= int(x >> 8)
	}
	sort.Ints(v)
}

// checksum hashes the numbers' bytes.
//
//go:noinline
func checksum(v []int) uint32 {
	buf := make([]byte, 0, 8*len(v))
	for _, x := range v {
		buf = strconv.AppendInt(buf, int64(x), 10)
	}
	var h uint32
	for range 8 {
		h = crc32.Update(h, crc32.IEEETable, buf)
	}
	return h
}

// score is arithmetic in its own frame: the function about half the time
// that the slow build makes 30% slower.
//
//go:noinline
func score(rounds int) uint64 {
	x := uint64(rounds)
	for range rounds {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func BenchmarkWork(b *testing.B) {
	f, err := strconv.ParseFloat(slowdown, 64)
	if err != nil || f <= 0 {
		b.Fatalf("slowdown %q", slowdown)
	}
	rounds := int(scoreRounds * f)
	for b.Loop() {
		v := parse(2000)
		sortKeys(v)
		sink += uint64(checksum(v)) + score(rounds)
	}
}

// scoreRounds makes score about half of an iteration's CPU time on an
// amd64 machine of 2026 (bench/RESULTS.md has the measured shares).
const scoreRounds = 200000
