//go:build !linux && !darwin

package objfile

// No hole support: DataSize reports every byte as data.
const (
	seekData = 0
	seekHole = 0
)

func isNoData(error) bool { return false }
