// Command goleaf runs a leaf that sets up no frame (spin) under a caller
// that does (mid), for TestWalkCFIGoLeaf.
package main

var sink int

// spin is a leaf: Go gives it no frame, its return address stays at SP.
//
//go:noinline
func spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i ^ (s >> 1)
	}
	return s
}

// mid sets up a frame record and calls spin.
//
//go:noinline
func mid(n int) int {
	var buf [4]int
	for i := range buf {
		buf[i] = spin(n + i)
	}
	return buf[0] + buf[3]
}

// grow grows the goroutine's stack once, so that mid's stack check
// passes without calling morestack.
//
//go:noinline
func grow() {
	var buf [16 << 10]byte
	for i := range buf {
		buf[i] = byte(i)
	}
	sink += int(buf[len(buf)-1])
}

func main() {
	grow()
	for {
		sink += mid(1000)
	}
}
