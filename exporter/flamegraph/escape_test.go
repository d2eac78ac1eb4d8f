package flamegraph

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

// FuzzEscapeAsEncodingXML: escape writes what encoding/xml's EscapeText
// writes, for any string (quotes, controls, invalid UTF-8, surrogates).
func FuzzEscapeAsEncodingXML(f *testing.F) {
	for _, s := range []string{"", "plain", `a<b>&"c"'d'`, "tab\there\nnl\rcr", "\x00\x1f\x7f", "bad \xff utf8 \xed\xa0\x80", "\uFFFD\uFFFE\U0010FFFF", "π::σ<T>", strings.Repeat("&", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got, want bytes.Buffer
		escape(&got, s)
		if err := xml.EscapeText(&want, []byte(s)); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("escape(%q) = %q, want %q", s, got.String(), want.String())
		}
	})
}
