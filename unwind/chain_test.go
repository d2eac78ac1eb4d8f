package unwind

import (
	"testing"
)

// TestCheckChain: addresses of a frame-record walk are trusted through
// frames whose rule keeps a record; a frameless frame ends the trusted part
// (and the stack is then not whole), an outermost frame ends the stack,
// code without a table is trusted but not confirmed.
func TestCheckChain(t *testing.T) {
	tabs := oneObject{testTable(ArchAMD64)}
	framed := uint64(objBase + fnFramed + 0x10) // returns into framed, past its prologue
	prologue := uint64(objBase + fnFramed + 2)  // after push rbp, before mov rbp,rsp
	leaf := uint64(objBase + fnLeaf + 0x10)     // frameless
	start := uint64(objBase + fnStart + 0x10)   // the outermost frame
	jit := uint64(jitBase + 0x40)               // no table
	for _, tc := range []struct {
		name string
		pcs  []uint64
		want ChainCheck
	}{
		{"framed to the start", []uint64{framed, framed, framed, start}, ChainCheck{Trusted: 4, Whole: true, Confirmed: true}},
		{"junk past the start", []uint64{framed, start, 0x1234, 0x5678}, ChainCheck{Trusted: 2, Whole: true, Confirmed: true}},
		{"frameless leaf", []uint64{leaf, framed, start}, ChainCheck{Trusted: 1}},
		{"prologue leaf", []uint64{prologue, framed, start}, ChainCheck{Trusted: 1}},
		{"frameless caller", []uint64{framed, leaf + 1, framed, start}, ChainCheck{Trusted: 2}},
		{"ends in a frameless frame", []uint64{framed, framed, leaf + 1}, ChainCheck{Trusted: 3}},
		{"through code without a table", []uint64{framed, jit, framed, start}, ChainCheck{Trusted: 4, Whole: true}},
		{"empty", nil, ChainCheck{Whole: true, Confirmed: true}},
	} {
		got := CheckChain(tc.pcs, tabs)
		if got != tc.want {
			t.Errorf("%s: CheckChain = %+v, want %+v", tc.name, got, tc.want)
		}
		if exact := got.Exact(len(tc.pcs)); exact != (tc.want.Trusted == len(tc.pcs) && tc.want.Whole && tc.want.Confirmed) {
			t.Errorf("%s: Exact = %v", tc.name, exact)
		}
	}
	// A Go binary's frames are trusted and confirmed without a rule.
	if got := CheckChain([]uint64{1, 2, 3}, fpTables{}); !got.Exact(3) {
		t.Errorf("frame-pointer object: %+v, want exact", got)
	}
	if n := testing.AllocsPerRun(100, func() { CheckChain([]uint64{framed, jit, framed, start}, tabs) }); n != 0 {
		t.Errorf("CheckChain allocates %v times", n)
	}
}

// fpTables says every address lies in an object that keeps frame pointers.
type fpTables struct{}

func (fpTables) Rule(uint64) (*Rule, bool) { return nil, true }
