package compact

import (
	"errors"
	"testing"
)

func TestCache(t *testing.T) {
	_, tab, _ := parseFixture(t, "arm64")
	c := NewCache(3 * tab.Bytes())
	builds := 0
	build := func() (*Table, error) { builds++; return tab, nil }
	for i := 0; i < 3; i++ {
		if got, err := c.Get("a", build); got != tab || err != nil {
			t.Fatalf("Get = %v, %v", got, err)
		}
	}
	if builds != 1 {
		t.Errorf("built %d times for one key", builds)
	}
	// Failures are remembered.
	fail := errors.New("unreadable")
	for i := 0; i < 2; i++ {
		if _, err := c.Get("bad", func() (*Table, error) { builds++; return nil, fail }); err != fail {
			t.Errorf("Get of a failing image = %v", err)
		}
	}
	if builds != 2 {
		t.Errorf("a failure was built %d times", builds-1)
	}
	// The bound drops the least recently used.
	c.Get("b", build)
	c.Get("a", build) // a is now the most recent
	c.Get("c", build)
	c.Get("d", build)
	if n, bytes := c.Len(); bytes > 3*tab.Bytes() || n > 4 {
		t.Errorf("cache holds %d entries, %d bytes; bound %d", n, bytes, 3*tab.Bytes())
	}
	before := builds
	c.Get("a", build)
	if builds != before {
		t.Error("the most recently used table was dropped")
	}
	c.Get("b", build)
	if builds != before+1 {
		t.Error("the least recently used table was kept beyond the bound")
	}
	if got, ok := c.Lookup("a"); got != tab || !ok {
		t.Errorf("Lookup of a cached table = %v, %v", got, ok)
	}
	if _, ok := c.Lookup("bad"); ok {
		t.Error("Lookup of a failure found a table")
	}
	if _, ok := c.Lookup("never"); ok || builds != before+1 {
		t.Error("Lookup of an unknown key found or built a table")
	}
	// No key: never cached.
	c.Get("", build)
	c.Get("", build)
	if builds != before+3 {
		t.Error("an empty key was cached")
	}
}
