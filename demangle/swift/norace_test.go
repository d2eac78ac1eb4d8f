//go:build !race

package swift

// raceEnabled is set under the race detector, whose sync.Pool drops
// items at random (so pooled buffers are allocated again now and then).
const raceEnabled = false
