// Copyright 2026 The macprof Authors. A local patch to
// github.com/google/pprof/profile; see ../PATCHES.md.

package profile

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled on its first use, so that a
// program that links this package but never parses a legacy profile does
// not compile twenty of them at start-up.
type lazyRegexp struct {
	once  sync.Once
	src   string
	build func() string // builds src, when set
	re    *regexp.Regexp
}

func lazyCompile(src string) *lazyRegexp { return &lazyRegexp{src: src} }

// lazyCompileFunc is lazyCompile of an expression built on first use too
// (joined or quoted strings would otherwise be built at start-up).
func lazyCompileFunc(build func() string) *lazyRegexp { return &lazyRegexp{build: build} }

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() {
		if l.build != nil {
			l.src = l.build()
		}
		l.re = regexp.MustCompile(l.src)
	})
	return l.re
}

func (l *lazyRegexp) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }

func (l *lazyRegexp) FindAllString(s string, n int) []string { return l.get().FindAllString(s, n) }

func (l *lazyRegexp) FindStringIndex(s string) []int { return l.get().FindStringIndex(s) }

func (l *lazyRegexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return l.get().FindAllStringSubmatchIndex(s, n)
}
