package unwind

import "testing"

// What the external tests (package unwind_test) need of the internal
// ones: they walk unwind/cfi's tables, and unwind/cfi imports unwind, so
// only an external test may import it.

// Synth is the synthetic stack of the internal tests.
type Synth = synth

// NewSynth returns a zeroed synthetic stack at [base, base+size).
func NewSynth(base uint64, size int) *Synth { return newSynth(base, size) }

// Word writes the word v at addr.
func (s *synth) Word(addr, v uint64) { s.word(addr, v) }

// Stack is the stack copy covering all of s.
func (s *synth) Stack() *Stack { return s.stack() }

// Base is the lowest address of s.
func (s *synth) Base() uint64 { return s.base }

// MustWalker is NewWalker, failing t on an error.
func MustWalker(t testing.TB, cfg Config) *Walker { return mustWalker(t, cfg) }

// The synthetic object of the internal tests: where it is mapped and
// where its code ends (offsets from SynthBase).
const (
	SynthBase = objBase
	SynthSize = objSize
	SynthEnd  = fnEnd
	TestStack = testBase
)

// SynthRows returns the synthetic object's rows: their offsets and rules.
func SynthRows(arch Arch) (offs []uint64, rules []Rule) {
	for _, r := range testRows(arch) {
		offs, rules = append(offs, r.Off), append(rules, r.Rule)
	}
	return offs, rules
}

// SynthFrameless lays out the internal tests' frameless stack; it returns
// the stack, the registers and the PCs a walk must give.
func SynthFrameless() (*Stack, Regs, []uint64) {
	s := newSynth(testBase, 4096)
	regs, want := frameless(s)
	return s.stack(), regs, want
}

// SynthCalls lays out n frameless frames, as calls does.
func SynthCalls(n int, alternate bool) (*Stack, Regs) {
	s, regs := calls(n, alternate)
	return s.stack(), regs
}
