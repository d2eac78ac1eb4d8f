package permissions

import (
	"bytes"
	"encoding/xml"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestEntitlementsPlist parses the plist as XML and checks it grants
// exactly the debugger entitlement, as codesign expects.
func TestEntitlementsPlist(t *testing.T) {
	b := EntitlementsPlist(DebuggerEntitlement)
	if !bytes.HasPrefix(b, []byte(`<?xml version="1.0" encoding="UTF-8"?>`)) {
		t.Errorf("no XML declaration:\n%s", b)
	}
	if !bytes.Contains(b, []byte(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN"`)) {
		t.Errorf("no plist DOCTYPE:\n%s", b)
	}
	var doc struct {
		XMLName xml.Name `xml:"plist"`
		Version string   `xml:"version,attr"`
		Dict    struct {
			Inner []byte `xml:",innerxml"`
		} `xml:"dict"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("plist is not XML: %v\n%s", err, b)
	}
	if doc.Version != "1.0" {
		t.Errorf("plist version %q", doc.Version)
	}
	// The dict alternates <key> and <true/>.
	dec := xml.NewDecoder(bytes.NewReader(doc.Dict.Inner))
	var seq []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			seq = append(seq, "<"+v.Name.Local+">")
		case xml.CharData:
			if s := strings.TrimSpace(string(v)); s != "" {
				seq = append(seq, s)
			}
		}
	}
	want := []string{"<key>", DebuggerEntitlement, "<true>"}
	if !slices.Equal(seq, want) {
		t.Errorf("dict holds %q, want %q", seq, want)
	}
	if got := EntitlementsPlist("a<b"); !bytes.Contains(got, []byte("a&lt;b")) {
		t.Errorf("key not escaped:\n%s", got)
	}
}

// TestEntitlementsPlistEscapesAsHTML: a key with each character XML
// gives a meaning is written with html.EscapeString's escapes and reads
// back as itself.
func TestEntitlementsPlistEscapesAsHTML(t *testing.T) {
	key := `a<b>&'"c`
	got := EntitlementsPlist(key)
	if want := "<key>a&lt;b&gt;&amp;&#39;&#34;c</key>"; !bytes.Contains(got, []byte(want)) {
		t.Errorf("plist does not hold %s:\n%s", want, got)
	}
	var doc struct {
		Keys []string `xml:"dict>key"`
	}
	if err := xml.Unmarshal(got, &doc); err != nil {
		t.Fatalf("plist is not XML: %v\n%s", err, got)
	}
	if !slices.Equal(doc.Keys, []string{key}) {
		t.Errorf("keys read back %q, want %q", doc.Keys, []string{key})
	}
}

// TestCodesignArgs: macprof is signed ad hoc with the hardened runtime
// (--options runtime), as samply setup does (samply
// src/mac/codesign_setup.rs: codesign --force --options runtime --sign -
// --entitlements ent.xml), issue 12 defect 8.
func TestCodesignArgs(t *testing.T) {
	got := CodesignArgs("/tmp/e.plist", "/usr/local/bin/macprof")
	want := []string{"--force", "--options", "runtime", "--sign", "-", "--entitlements", "/tmp/e.plist", "/usr/local/bin/macprof"}
	if !slices.Equal(got, want) {
		t.Errorf("codesign %q, want %q", got, want)
	}
}

func TestLinuxPtraceAdvice(t *testing.T) {
	for scope, words := range map[string][]string{
		"":    {"not active"},
		"0\n": {"any process of your user"},
		"1\n": {"CAP_SYS_PTRACE", "setcap", "sudo", "record --"},
		"2":   {"CAP_SYS_PTRACE"},
		"3":   {"disabled"},
		"7":   {"does not know"},
	} {
		got := LinuxPtraceAdvice(scope, false)
		for _, w := range words {
			if !strings.Contains(got, w) {
				t.Errorf("scope %q: advice lacks %q:\n%s", scope, w, got)
			}
		}
	}
	if !strings.Contains(LinuxPtraceAdvice("1", true), "runs as root") {
		t.Error("root not mentioned for root")
	}
}
