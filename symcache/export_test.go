package symcache

import "time"

// What the external tests (package symcache_test, which use
// internal/fixture, a package that imports symcache) need from the
// package's own test helpers.
var (
	Fixture       = fixture
	LLVMSymbolize = llvmSymbolize
	TextAddrs     = textAddrs
	Step          = step
)

// SetPoolClock replaces the clock and idle time of p.
func SetPoolClock(p *StringPools, now func() time.Time, idle time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.now, p.idle = now, idle
}
