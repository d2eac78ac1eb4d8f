package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/sampler"
)

// Validate checks what the command line and the config file gave and says
// what is wrong in one line, so that a mistake stops the agent at once
// rather than leaving it running on a default.
func (c Config) Validate() error {
	for _, pid := range c.PIDs {
		if pid <= 0 {
			return fmt.Errorf("--pid must be a PID (a positive number), not %d", pid)
		}
	}
	switch {
	case len(c.PIDs) == 0 && c.Name == nil:
		return errors.New("name the processes to profile: --pid PID and/or --name REGEX")
	case c.Hz < 1 || c.Hz > sampler.MaxHz:
		return fmt.Errorf("-F must be between 1 and %d Hz, not %d", sampler.MaxHz, c.Hz)
	case c.Window < time.Second:
		return fmt.Errorf("--window must be at least 1s, not %v", c.Window)
	case c.Rescan < 100*time.Millisecond:
		return fmt.Errorf("--rescan must be at least 100ms, not %v", c.Rescan)
	case c.Duration < 0:
		return fmt.Errorf("-d must be positive, or 0 to run until SIGTERM, not %v", c.Duration)
	case c.ShutdownTimeout < 0:
		return fmt.Errorf("--shutdown-timeout must not be negative, not %v", c.ShutdownTimeout)
	case c.Mode != profile.ModeCPU && c.Mode != profile.ModeWall:
		return fmt.Errorf("unknown mode %d", c.Mode)
	}
	switch c.Telemetry {
	case "otlp", "stdout", "none", "auto":
		return nil
	}
	return fmt.Errorf("--telemetry must be otlp, stdout, none or auto, not %q", c.Telemetry)
}

// Validate checks the queue and exporter settings and says what is wrong
// in one line.
func (e Exporters) Validate() error {
	switch {
	case e.QueueItems < 2:
		// One window in flight and one waiting: the uploader's least.
		return fmt.Errorf("--queue-windows must be at least 2, not %d", e.QueueItems)
	case e.QueueBytes < 1:
		return fmt.Errorf("--queue-bytes must be positive, not %d", e.QueueBytes)
	case e.RetryMax < 0:
		return fmt.Errorf("--retry-max must be positive, or 0 for the window length, not %v", e.RetryMax)
	case e.OTLP.Timeout < 0:
		return fmt.Errorf("--otlp-timeout (or OTEL_EXPORTER_OTLP_TIMEOUT) must not be negative, not %v", e.OTLP.Timeout)
	case e.Pyroscope != nil && e.Pyroscope.Timeout < 0:
		return fmt.Errorf("--pyroscope-timeout must not be negative, not %v", e.Pyroscope.Timeout)
	}
	return nil
}

// jsonKind names a JSON value that a config setting cannot take.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "a nested array"
	}
	return "an object"
}
