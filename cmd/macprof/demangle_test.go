package main

import (
	"bytes"
	"strings"
	"testing"
)

func demangleRun(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	old := demangleStdin
	demangleStdin = strings.NewReader(stdin)
	defer func() { demangleStdin = old }()
	var out, errb bytes.Buffer
	st := run(append([]string{"demangle"}, args...), &out, &errb)
	return out.String(), errb.String(), st
}

func TestDemangleCommand(t *testing.T) {
	const rustLegacy = "_ZN3std10sys_common9backtrace28__rust_begin_short_backtrace17h5ba2a5ba1d0b3f0fE"
	for _, c := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"arguments", "", []string{"_ZN3foo3barEv", "__ZNK3geo5Shape4areaEi", "main", rustLegacy, "_RNvCs1234_7mycrate4main"},
			"foo::bar()\ngeo::Shape::area(int) const\nmain\nstd::sys_common::backtrace::__rust_begin_short_backtrace::h5ba2a5ba1d0b3f0f\nmycrate[3c1c0]::main\n"},
		{"simplified", "", []string{"--simplified", rustLegacy, "_Z3foov.cold"},
			"std::sys_common::backtrace::__rust_begin_short_backtrace\nfoo()\n"},
		{"stdin, one line per line", "_ZN3foo3barEv\n\nnot mangled\n  at _Z3bazi+0x10 (x.cc)\n_Zbroken", nil,
			"foo::bar()\n\nnot mangled\n  at baz(int)+0x10 (x.cc)\n_Zbroken"},
		{"stdin simplified", "0 " + rustLegacy + "\n", []string{"--simplified"},
			"0 std::sys_common::backtrace::__rust_begin_short_backtrace\n"},
		{"swift", "", []string{"$s4main5greetyySiF", "_TtGSqGSaC5sugar7MyClass__"},
			"main.greet(Swift.Int) -> ()\n[sugar.MyClass]?\n"},
		{"swift simplified from stdin", "frame 3: _$s4main3fooyyFyycfU_ + 12\n", []string{"--simplified"},
			"frame 3: closure #1 in foo() + 12\n"},
	} {
		out, errs, st := demangleRun(t, c.stdin, c.args...)
		if out != c.want || st != 0 {
			t.Errorf("%s: status %d, stderr %q, output\n%s\nwant\n%s", c.name, st, errs, out, c.want)
		}
	}
	if _, errs, st := demangleRun(t, "", "--bogus"); st != 2 || !strings.Contains(errs, "bogus") {
		t.Errorf("bad flag: status %d, stderr %q", st, errs)
	}
	var help bytes.Buffer
	if run([]string{"help"}, &help, new(bytes.Buffer)); !strings.Contains(help.String(), "demangle") {
		t.Errorf("the command list lacks demangle:\n%s", help.String())
	}
}
