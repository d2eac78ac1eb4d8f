//go:build !linux

package sampler

import (
	"context"
	"errors"
	"time"
)

// tickFD is Linux's tick timer; elsewhere the sampler ticks on a Go timer.
type tickFD struct{}

func newTickFD() (*tickFD, error) { return nil, errors.ErrUnsupported }

func (t *tickFD) kick()  {}
func (t *tickFD) close() {}

func (t *tickFD) await(context.Context, time.Time, chan struct{}, chan struct{}) waitEvent {
	panic("sampler: no tick timerfd")
}
