package record

import "github.com/macprof/macprof/exporter"

// timelineSamples bounds the samples a recording keeps the times of, for a
// timeline output (speedscope): 32 MiB, a quarter of an hour of 20 busy
// threads at 99 Hz. Later samples are in the other outputs only.
const timelineSamples = 1 << 21

// timeline returns the timeline the sampler keeps for outputs
// (sampler.Config.Timeline): timelineSamples when one of them shows time,
// else none.
func timeline(outputs []Output) int {
	for _, o := range outputs {
		if o.Format == exporter.FormatSpeedscope {
			return timelineSamples
		}
	}
	return 0
}
