package pyroscope_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/macprof/macprof/exporter/pyroscope"
	"github.com/macprof/macprof/internal/fixture"
)

// TestCredentialsStayWithTheServer: a server that redirects (307) to
// another origin gets neither the bearer token, the basic auth of its URL,
// the tenant nor the extra headers sent there, also with a client of the
// caller's that follows redirects; the target and the error show no
// password (issue 27, defect 8).
func TestCredentialsStayWithTheServer(t *testing.T) {
	stolen := make(chan http.Header, 4)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen <- r.Header.Clone()
	}))
	defer other.Close()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer server.Close()
	fx := fixture.NewFixture(t, 1)
	for _, cfg := range []pyroscope.Config{
		{URL: strings.Replace(server.URL, "http://", "http://ann:hunter2@", 1), TenantID: "t1", Headers: map[string]string{"X-Api-Key": "s3cret"}, HTTPClient: &http.Client{}},
		{URL: server.URL, BearerToken: "s3cret", HTTPClient: &http.Client{}},
		{URL: strings.Replace(server.URL, "http://", "http://ann:hunter2@", 1), BearerToken: "s3cret"},
	} {
		c, err := pyroscope.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = c.PushWindow(context.Background(), fx.Window, fixture.NewCache())
		if err == nil || !strings.Contains(err.Error(), "not followed") {
			t.Errorf("push to a redirecting server: %v; want an error saying the redirect was not followed", err)
		}
		select {
		case h := <-stolen:
			t.Errorf("the other server received a push, headers %v", h)
		default:
		}
		for what, s := range map[string]string{"target": c.Target(), "error": fmt.Sprint(err)} {
			if strings.Contains(s, "hunter2") || strings.Contains(s, "s3cret") {
				t.Errorf("%s %q shows a credential", what, s)
			}
		}
	}
}

// TestHeaderControlCharacters: a header, token or tenant with CR, LF or
// another control character is refused when the client is made.
func TestHeaderControlCharacters(t *testing.T) {
	for _, cfg := range []pyroscope.Config{
		{Headers: map[string]string{"X-Api-Key": "abc\r\nX-Evil: 1"}},
		{Headers: map[string]string{"X-Api\nKey": "abc"}},
		{BearerToken: "tok\r\nX-Evil: 1"},
		{TenantID: "t\n1"},
	} {
		cfg.URL = "http://localhost:1"
		if _, err := pyroscope.New(cfg); err == nil || !strings.Contains(err.Error(), "header") {
			t.Errorf("%+v: %v; want an error naming the header", cfg, err)
		}
	}
}
