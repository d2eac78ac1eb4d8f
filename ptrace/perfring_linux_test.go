//go:build linux && (amd64 || arm64)

package ptrace

import "testing"

// TestRingSliceDoesNotWrap: a drained stack copy is walked where the kernel
// wrote it only when it does not wrap around the ring's end; readAt, which
// the copy otherwise takes, joins the two parts.
func TestRingSliceDoesNotWrap(t *testing.T) {
	r := &perfRing{data: make([]byte, 64)}
	for i := range r.data {
		r.data[i] = byte(i)
	}
	if got := r.slice(64+8, 16); len(got) != 16 || got[0] != 8 || got[15] != 23 || cap(got) != 16 {
		t.Errorf("slice at 72 (8 in the second lap): %v, cap %d", got, cap(got))
	}
	if got := r.slice(48, 16); len(got) != 16 || got[15] != 63 {
		t.Errorf("slice up to the end: %v", got)
	}
	for _, n := range []int{17, 65, -1} {
		if got := r.slice(48, n); got != nil {
			t.Errorf("slice of %d at 48 in a 64-byte ring: %v, want nil (it wraps)", n, got)
		}
	}
	buf := make([]byte, 17)
	r.readAt(buf, 48)
	if buf[15] != 63 || buf[16] != 0 {
		t.Errorf("readAt across the end: %v", buf)
	}
}
