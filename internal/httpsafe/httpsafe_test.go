package httpsafe

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://collector:4318/v1development/profiles", "https://collector:4318/v1development/profiles"},
		{"https://ann:hunter2@collector:4318/x", "https://ann:REDACTED@collector:4318/x"},
		{"https://glc_token@collector/x", "https://REDACTED@collector/x"},
		{"http://h/ingest?name=app%7Bx%3D1%7D&api_key=s3cret&from=1", "http://h/ingest?name=app%7Bx%3D1%7D&api_key=REDACTED&from=1"},
		{"http://h/?token=a&X-Api-Key=b&access_token=c&sig=d&Password=e", "http://h/?token=REDACTED&X-Api-Key=REDACTED&access_token=REDACTED&sig=REDACTED&Password=REDACTED"},
		{"http://ann:pw@h:bad/?api_key=s", "http://REDACTED@h:bad/?api_key=REDACTED"}, // does not parse
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	in := `otlp: HTTP POST https://ann:hunter2@c:4318/p?api_key=s3cret: Post "https://ann:***@c:4318/p?api_key=s3cret": dial tcp: refused`
	got := Redact(in)
	if strings.Contains(got, "hunter2") || strings.Contains(got, "s3cret") || strings.Count(got, Redacted) != 4 {
		t.Errorf("Redact(%q) = %q", in, got)
	}
}

func TestCheckHeader(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		ok          bool
	}{
		{"X-Api-Key", "abc def\tghi", true},
		{"Authorization", "Bearer x", true},
		{"X-Api-Key", "abc\r\nX-Evil: 1", false},
		{"X-Api-Key", "abc\n", false},
		{"X-Api-Key", "a\x00b", false},
		{"X-Api-Key", "a\x7fb", false},
		{"X-Api\r\nKey", "v", false},
		{"X Api", "v", false},
		{"X:Api", "v", false},
		{"", "v", false},
	} {
		if err := CheckHeader(tc.name, tc.value); (err == nil) != tc.ok {
			t.Errorf("CheckHeader(%q, %q) = %v, want ok %v", tc.name, tc.value, err, tc.ok)
		}
	}
}

// TestSameOrigin: a 307 to another port of the same host (another origin,
// which Go's own rule, by host name, would follow with Authorization) is
// not followed; one within the origin is, headers and body included.
func TestSameOrigin(t *testing.T) {
	got := make(chan http.Header, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
	}))
	defer other.Close()
	var sameBody string
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/stolen", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, "/there", http.StatusTemporaryRedirect)
		case "/there":
			b, _ := io.ReadAll(r.Body)
			sameBody = r.Header.Get("X-Api-Key") + " " + string(b)
		}
	}))
	defer endpoint.Close()
	c := SameOrigin(&http.Client{})
	post := func(path string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, endpoint.URL+path, strings.NewReader("body"))
		req.Header.Set("X-Api-Key", "s3cret")
		req.Header.Set("Authorization", "Bearer s3cret")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := post("/away"); res.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("a redirect to another origin: status %d, want the 307 itself", res.StatusCode)
	}
	select {
	case h := <-got:
		t.Errorf("the other origin got a request, headers %v", h)
	default:
	}
	if res := post("/here"); res.StatusCode != http.StatusOK || sameBody != "s3cret body" {
		t.Errorf("a redirect within the origin: status %d, received %q", res.StatusCode, sameBody)
	}
}
