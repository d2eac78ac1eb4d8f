package swift

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// symbolRE is what swift demangle looks for in each line of its standard
// input (tools/swift-demangle): Swift's test feeds manglings.txt's inputs
// through it, so a line may hold text around the names.
var symbolRE = regexp.MustCompile(`(_T|_?\$[Ss]|_?\$e|@__swiftmacro_)[_a-zA-Z0-9$.]+`)

// classifyRE is the "{T:target,C} " prefix swift demangle -classify adds,
// which Swift's test expects and the plain tool does not print.
var classifyRE = regexp.MustCompile(`^\{(T:[^}]*?)?,?C?\} `)

// filterLine is swift demangle's standard-input mode: each symbol-looking
// word demangled, or kept when it does not demangle.
func filterLine(line string, demangle func(string) (string, bool)) string {
	return symbolRE.ReplaceAllStringFunc(line, func(s string) string {
		if d, ok := demangle(s); ok {
			return d
		}
		return s
	})
}

type mangling struct {
	line     int
	in, want string
}

// readManglings reads "MANGLED ---> EXPECTED" lines as Swift's test does
// (sed: spaces before and after the arrow are not part of either side).
func readManglings(t *testing.T, path string) []mangling {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []mangling
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		i := strings.Index(l, "--->")
		if strings.HasPrefix(l, "#") || i < 0 {
			continue
		}
		in := strings.TrimRight(l[:i], " ")
		want := strings.TrimLeft(l[i+len("--->"):], " ")
		want = classifyRE.ReplaceAllString(want, "")
		out = append(out, mangling{n, in, want})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// passRate runs every line and returns the failing ones.
func passRate(t *testing.T, path string, demangle func(string) (string, bool)) (total int, failing []mangling) {
	ms := readManglings(t, path)
	for _, m := range ms {
		if got := filterLine(m.in, demangle); got != m.want {
			failing = append(failing, m)
			if testing.Verbose() && os.Getenv("SWIFT_DEMANGLE_SHOW") != "" {
				t.Logf("line %d: %s\n got %s\nwant %s", m.line, m.in, got, m.want)
			}
		}
	}
	return len(ms), failing
}

// The ratchet: lines of each corpus that demangle exactly as Swift does.
// Raise these when more pass; the test fails if fewer do.
const (
	minFullPass       = 513 // manglings.txt, full form
	minSimplifiedPass = 502 // manglings.txt inputs, simplified form
	minSimplifiedFile = 217 // simplified-manglings.txt (Swift's own simplified test)
)

var corpora = []struct {
	file     string
	min      int
	demangle func(string) (string, bool)
}{
	{"manglings.txt", minFullPass, Demangle},
	{"manglings-simplified.txt", minSimplifiedPass, Simplified},
	{"simplified-manglings.txt", minSimplifiedFile, Simplified},
}

// TestManglings runs every line of Swift's demangling test corpus (and the
// simplified forms) and checks the pass rate against the ratchet and the
// failing lines against testdata/failing.txt, which lists each with a
// reason. SWIFT_MANGLINGS_UPDATE=1 rewrites that list.
func TestManglings(t *testing.T) {
	var listed []string
	for _, c := range corpora {
		total, failing := passRate(t, "testdata/"+c.file, c.demangle)
		pass := total - len(failing)
		t.Logf("%s: %d/%d lines pass (%.1f%%)", c.file, pass, total, 100*float64(pass)/float64(total))
		if pass < c.min {
			t.Errorf("%s: %d lines pass, fewer than the %d recorded", c.file, pass, c.min)
		}
		for _, m := range failing {
			listed = append(listed, c.file+":"+strconv.Itoa(m.line)+" "+failureReason(m.in)+" "+m.in)
		}
	}
	const list = "testdata/failing.txt"
	if os.Getenv("SWIFT_MANGLINGS_UPDATE") != "" {
		hdr := "# Lines of the corpora that do not yet demangle exactly as Swift does:\n# FILE:LINE REASON MANGLED. Written by SWIFT_MANGLINGS_UPDATE=1 go test -run TestManglings.\n"
		if err := os.WriteFile(list, []byte(hdr+strings.Join(listed, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			known[l] = true
		}
	}
	for _, l := range listed {
		if !known[l] {
			t.Errorf("newly failing (or list out of date): %s", l)
		}
		delete(known, l)
	}
	for l := range known {
		t.Errorf("now passes, remove from %s and raise the ratchet: %s", list, l)
	}
}

// failureReason is the category a failing line is listed under.
func failureReason(in string) string {
	in = strings.TrimSpace(in)
	switch {
	case strings.HasPrefix(in, "_T") && !strings.HasPrefix(in, "_T0"):
		return "[old-mangling: Swift 3 and earlier, _T/_Tt, not implemented]"
	case !symbolRE.MatchString(in):
		return "[not-a-symbol]"
	}
	return "[printing differs]"
}
