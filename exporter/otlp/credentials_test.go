package otlp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/macprof/macprof/exporter/otlp"
)

// TestCredentialsStayWithTheEndpoint: an endpoint that redirects (307) to
// another server does not get the export's headers or basic auth sent
// there, the error says why, and neither the target nor the error shows
// the endpoint's password or API key (issue 27, defect 8).
func TestCredentialsStayWithTheEndpoint(t *testing.T) {
	stolen := make(chan http.Header, 4)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen <- r.Header.Clone()
	}))
	defer other.Close()
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1development/profiles", http.StatusTemporaryRedirect)
	}))
	defer endpoint.Close()

	url := strings.Replace(endpoint.URL, "http://", "http://ann:hunter2@", 1) + "/v1development/profiles?api_key=s3cret"
	exp, err := otlp.New(otlp.Config{Endpoint: url, Headers: map[string]string{"X-Api-Key": "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()
	err = exp.Send(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "another origin: not followed") {
		t.Errorf("export to a redirecting endpoint: %v; want an error saying the redirect was not followed", err)
	}
	select {
	case h := <-stolen:
		t.Errorf("the other server received an export, headers %v", h)
	default:
	}
	for what, s := range map[string]string{"target": exp.Target(), "error": fmt.Sprint(err)} {
		if strings.Contains(s, "hunter2") || strings.Contains(s, "s3cret") || !strings.Contains(s, "REDACTED") {
			t.Errorf("%s %q shows a credential", what, s)
		}
	}
}

// TestHeaderControlCharacters: a header whose name or value holds CR, LF
// or another control character is refused when the exporter is made, not
// at every export as a transient failure.
func TestHeaderControlCharacters(t *testing.T) {
	for _, h := range []map[string]string{
		{"X-Api-Key": "abc\r\nX-Evil: 1"},
		{"X-Api-Key": "abc\n"},
		{"X-Api-Key\r\nX-Evil": "1"},
		{"X-Api-Key": "a\x00b"},
	} {
		for _, proto := range []string{otlp.ProtocolHTTPProtobuf, otlp.ProtocolGRPC} {
			exp, err := otlp.New(otlp.Config{Protocol: proto, Endpoint: "http://localhost:1", Headers: h})
			if err == nil {
				exp.Close()
			}
			if err == nil || !strings.Contains(err.Error(), "header") {
				t.Errorf("%s with headers %q: %v; want an error naming the header", proto, h, err)
			}
		}
	}
}
