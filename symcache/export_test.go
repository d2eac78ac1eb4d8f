package symcache

// What the external tests (package symcache_test, which use
// internal/fixture, a package that imports symcache) need from the
// package's own test helpers.
var (
	Fixture       = fixture
	LLVMSymbolize = llvmSymbolize
	TextAddrs     = textAddrs
	Step          = step
)
