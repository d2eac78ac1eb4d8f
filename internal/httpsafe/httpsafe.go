// Package httpsafe keeps an exporter's credentials with its endpoint: it
// checks configured headers before anything is sent, refuses redirects to
// another origin, and removes secrets from URLs before they are logged.
package httpsafe

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// CheckHeader refuses a header name that is not an HTTP token, or a value
// with a control character (CR and LF would start another header or end
// them; Go's transport would refuse every request instead, which looks like
// a server that is down).
func CheckHeader(name, value string) error {
	if name == "" {
		return errors.New("header with an empty name")
	}
	for i := 0; i < len(name); i++ {
		if !tokenChar(name[i]) {
			return fmt.Errorf("header name %q: %q is not allowed in a header name", name, name[i])
		}
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return fmt.Errorf("header %s: its value has a control character (%q)", name, c)
		}
	}
	return nil
}

// tokenChar reports whether c may be in an HTTP token (RFC 9110, 5.6.2).
func tokenChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// SameOrigin makes c follow a redirect only to the origin (scheme, host and
// port) of the request it started from, and returns c. A redirect elsewhere
// is not followed: its response is returned as it is, so that the headers
// (Authorization, API keys, tenants) and the body meant for the endpoint
// are not sent to another server. A CheckRedirect c had still applies to
// the redirects it allows.
func SameOrigin(c *http.Client) *http.Client {
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && !sameOrigin(via[0].URL, req.URL) {
			return http.ErrUseLastResponse
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return c
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// port returns u's port, or its scheme's default.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// Redacted is what a secret is replaced with.
const Redacted = "REDACTED"

// secretKey matches query parameter names that hold secrets (api_key,
// apikey, token, access_token, password, secret, sig, signature, auth...).
// The regexps here are compiled on first use, not at start-up, which every
// command pays.
var secretKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(key|token|secret|pass|pwd|auth|sig|cred|session)`)
})

// RedactURL returns rawURL with its password, or its user when there is no
// password (a token given as the user), and every query value whose name
// looks secret replaced by Redacted. A URL that does not parse has
// whatever could be userinfo replaced.
func RedactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Opaque != "" {
		s := userinfo().ReplaceAllString(rawURL, "${1}"+Redacted+"@")
		return secretParam().ReplaceAllString(s, "${1}"+Redacted)
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), Redacted)
		} else {
			u.User = url.User(Redacted)
		}
	}
	if u.RawQuery != "" {
		q := strings.Split(u.RawQuery, "&")
		changed := false
		for i, kv := range q {
			k, _, _ := strings.Cut(kv, "=")
			if name, err := url.QueryUnescape(k); err == nil && secretKey().MatchString(name) || err != nil && secretKey().MatchString(k) {
				q[i], changed = k+"="+Redacted, true
			}
		}
		if changed {
			u.RawQuery = strings.Join(q, "&")
		}
	}
	return u.String()
}

// userinfo and secretParam match the userinfo and the secret query values
// of a URL that does not parse.
var (
	userinfo    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(://)[^/?#\s@]*@`) })
	secretParam = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)([?&][^=&#\s]*(?:key|token|secret|pass|pwd|auth|sig|cred|session)[^=&#\s]*=)[^&#\s]*`)
	})
)

// urlInText finds URLs in free text (log messages, errors).
var urlInText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`) })

// Redact returns s with every URL in it passed through RedactURL.
func Redact(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlInText().ReplaceAllStringFunc(s, RedactURL)
}
