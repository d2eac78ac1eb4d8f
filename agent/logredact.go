package agent

import (
	"context"
	"log/slog"

	"github.com/macprof/macprof/internal/httpsafe"
)

// redactHandler removes credentials from URLs in every message and string
// or error value before h writes them: an endpoint's password or API key
// must not reach a log, whichever line quotes it.
type redactHandler struct{ h slog.Handler }

func (r redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, httpsafe.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = redactAttr(a)
	}
	return redactHandler{r.h.WithAttrs(red)}
}

func (r redactHandler) WithGroup(name string) slog.Handler { return redactHandler{r.h.WithGroup(name)} }

// redactAttr redacts a string, error or Stringer value (a group's members
// too); numbers and the like are left as they are.
func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, httpsafe.Redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, m := range g {
			red[i] = redactAttr(m)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, httpsafe.Redact(x.Error()))
		case interface{ String() string }:
			return slog.String(a.Key, httpsafe.Redact(x.String()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
