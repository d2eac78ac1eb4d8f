package diff

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Metric names what a threshold judges.
type Metric string

// The metrics --fail-on accepts.
const (
	Flat  Metric = "flat"  // a function's own share of the total
	Cum   Metric = "cum"   // the share of samples with the function anywhere on the stack
	Total Metric = "total" // the profile's total (time, or samples), base and new
	// Time is a function's own time per profile (its flat samples, those
	// Go's preemption interrupted included): only for profiles of a fixed
	// amount of work, like total.
	Time Metric = "time"
)

// Threshold is one --fail-on rule: a rise of the metric by at least Value,
// in percentage points of the total (PP) or relative to the base (percent).
type Threshold struct {
	Metric Metric
	Value  float64
	PP     bool
}

// DefaultFailOn is what --fail-on is when not given: a function whose own
// time, or time with its callees, rose by a point of the total.
const DefaultFailOn = "flat:+1pp,cum:+1pp"

func (t Threshold) String() string {
	unit := "%"
	if t.PP {
		unit = "pp"
	}
	return fmt.Sprintf("%s:+%s%s", t.Metric, strconv.FormatFloat(t.Value, 'f', -1, 64), unit)
}

// ParseThresholds parses a comma-separated list such as "cum:+5%,flat:+2pp".
func ParseThresholds(s string) ([]Threshold, error) {
	var out []Threshold
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		t, err := parseThreshold(f)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--fail-on %q: no threshold", s)
	}
	return out, nil
}

func parseThreshold(s string) (Threshold, error) {
	bad := func(why string) (Threshold, error) {
		return Threshold{}, fmt.Errorf("--fail-on %q: %s (want METRIC:+N%% or METRIC:+Npp, METRIC flat, cum, total or time)", s, why)
	}
	m, v, ok := strings.Cut(s, ":")
	if !ok {
		return bad("no ':'")
	}
	t := Threshold{Metric: Metric(m)}
	switch t.Metric {
	case Flat, Cum, Total, Time:
	default:
		return bad("unknown metric " + strconv.Quote(m))
	}
	switch {
	case strings.HasSuffix(v, "pp"):
		t.PP = true
		v = strings.TrimSuffix(v, "pp")
	case strings.HasSuffix(v, "%"):
		v = strings.TrimSuffix(v, "%")
	default:
		return bad("the value needs a unit, % or pp")
	}
	if t.PP && (t.Metric == Total || t.Metric == Time) {
		return bad(string(t.Metric) + " takes a relative change (%), not points")
	}
	x, err := strconv.ParseFloat(strings.TrimPrefix(v, "+"), 64)
	if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) || strings.HasPrefix(v, "-") {
		return bad("the value must be a number of 0 or more")
	}
	t.Value = x
	return t, nil
}
