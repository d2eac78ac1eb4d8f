package unwind

import "fmt"

// CFABase tells which register the canonical frame address is computed from.
type CFABase uint8

// CFA bases. CFANone marks addresses no FDE covers.
const (
	CFANone        CFABase = iota // no unwind information for the address
	CFASP                         // CFA = SP + CFAOff
	CFAFP                         // CFA = FP + CFAOff
	CFAUnsupported                // an expression or another register: cannot unwind here
	CFADerefSP                    // CFA = *(SP + CFAOff) + CFAPlus (a realigned stack: OpenSSL's assembly)
	CFADerefFP                    // CFA = *(FP + CFAOff) + CFAPlus
)

// RegRule tells where a register of the caller is found.
type RegRule uint8

// Register rules.
const (
	// RegSame: the register still holds the caller's value (for the
	// return address on arm64: it is in LR).
	RegSame RegRule = iota
	// RegSaved: saved at CFA + offset.
	RegSaved
	// RegUndefined: the register has no value; for the return address,
	// the outermost frame (for example _start).
	RegUndefined
	// RegUnsupported: a rule the table does not model (another register,
	// an expression).
	RegUnsupported
	// RegSavedSP: saved at the frame's SP + offset, not the CFA's (a
	// signal frame's registers lie in the ucontext the kernel pushed).
	RegSavedSP
)

// Rule is how to unwind one frame at a range of code addresses: the one
// rule type every table format compiles to (DWARF CFI rows in unwind/cfi,
// Apple compact unwind entries in unwind/compact), so that one walk,
// WalkCFI, walks a stack through any of them.
type Rule struct {
	CFAOff int32 // added to the CFA base register
	FPOff  int32 // FP saved at CFA+FPOff when FP == RegSaved
	RAOff  int32 // return address saved at CFA+RAOff when RA == RegSaved
	// CFAPlus is added to the word read for CFADerefSP and CFADerefFP.
	CFAPlus int32
	CFA     CFABase
	FP      RegRule
	RA      RegRule
	// Body: the rule holds for the function's body, not its prologue
	// and epilogue (a compact unwind entry covers a whole function); in
	// the interrupted frame on arm64 the walk then asks LR whether the
	// frame record is set up yet (see FuncBounds).
	Body bool
	// Signal: a signal frame (the kernel's return trampoline, CIE
	// augmentation "S"): its caller's PC is the interrupted one, exact,
	// not a return address, so the walk looks it up as it is.
	Signal bool
}

// FuncBounds is implemented by Tables whose rules hold for whole function
// bodies (Rule.Body): Func returns the bounds [start, end) of the function
// at pc. A walk uses it to tell an arm64 function that has made a call of
// its own (LR points into it) from one in its prologue or epilogue (LR
// holds its return address).
type FuncBounds interface {
	Func(pc uint64) (start, end uint64, ok bool)
}

// String writes the rule the way the tests compare it.
func (r Rule) String() string {
	var s string
	switch r.CFA {
	case CFANone:
		return "none"
	case CFASP:
		s = fmt.Sprintf("CFA=SP%+d", r.CFAOff)
	case CFAFP:
		s = fmt.Sprintf("CFA=FP%+d", r.CFAOff)
	case CFADerefSP:
		s = fmt.Sprintf("CFA=[SP%+d]%+d", r.CFAOff, r.CFAPlus)
	case CFADerefFP:
		s = fmt.Sprintf("CFA=[FP%+d]%+d", r.CFAOff, r.CFAPlus)
	default:
		s = "CFA=?"
	}
	reg := func(name string, rule RegRule, off int32) string {
		switch rule {
		case RegSame:
			return " " + name + "=same"
		case RegSaved:
			return fmt.Sprintf(" %s=[CFA%+d]", name, off)
		case RegUndefined:
			return " " + name + "=undefined"
		case RegSavedSP:
			return fmt.Sprintf(" %s=[SP%+d]", name, off)
		}
		return " " + name + "=?"
	}
	s += reg("FP", r.FP, r.FPOff) + reg("RA", r.RA, r.RAOff)
	if r.Signal {
		s += " signal"
	}
	return s
}
