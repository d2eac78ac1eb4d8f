package symcache

import (
	"errors"

	"github.com/macprof/macprof/images"
)

// LoadMachO builds the Table of a Mach-O image. (Implemented with the Mach-O
// issue.)
func LoadMachO(img *images.Image) (*Table, error) {
	return nil, errors.New("symcache: Mach-O symbol tables are not implemented yet")
}
