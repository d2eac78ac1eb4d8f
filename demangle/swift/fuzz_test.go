package swift

import (
	"testing"
)

// FuzzDemangle feeds arbitrary names to the demangler and printer, without
// the panic guard Demangle has: no input may panic, the output stays
// within the printer's limit, and a parser reused from the pool prints
// what a new one does.
func FuzzDemangle(f *testing.F) {
	for _, s := range []string{
		"$s4main5greetyySiF", "_$s4main5greetyySiF", "$sSa", "_T0SiSgD", "$s4main3FooV3bar1xSSSi_tF",
		"$s4test1fyyYaF", "$s4main1AC1xSivg", "$sSo6NSViewCMa", "$s4main3fooyyFyycfU_", "$s4mainAAyyxlF",
		"$sSD5index6forKeySD5IndexVyxq__Gq_xS_SHRzlF", "$s4main1SVWOy", "$ss5print_9separator10terminatoryypd_S2StF",
		"$s4main3FooCAA1PA2aDP1fyyFTW", "$sS2iIegyd_S2iIegnr_TR", "$s4main1fyySiFTf4n_g", "$s4mainAAyyFTm",
		"$s4main1xSivau", "@__swiftmacro_1a13testStringifyAA1bySi_SitF9stringifyfMf_",
		"$sAAAAAAAAAAA", "$s0A", "$s00_", "$sxq_q0_", "$s1aE", "$sSiSgSgSgSgSgSgSgSgD",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, o := range []options{fullOptions, simplifiedOptions} {
			out := demangleUnguarded(s, o)
			if len(out) > maxOutput {
				t.Fatalf("%q: %d bytes out", s, len(out))
			}
			// A pooled parser (the last input's) demangles as a new one.
			name := s
			if len(name) > 2 && name[0] == '_' && name[1] == '_' {
				name = name[1:]
			}
			if fresh := nodeToString(demangleSymbol(name), o); out != fresh {
				t.Fatalf("%q: %q by a pooled parser, %q by a new one", s, out, fresh)
			}
		}
	})
}
