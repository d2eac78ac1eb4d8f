package swift

import "sync"

// lazy is a table built on its first use: the package's init then builds
// nothing, so a program that links it but demangles no C++ or Rust name
// pays no allocations or page faults for it.
type lazy[T any] struct {
	once  sync.Once
	build func() T
	v     T
}

// get returns the table, building it on the first call.
func (l *lazy[T]) get() T {
	l.once.Do(func() { l.v = l.build() })
	return l.v
}
