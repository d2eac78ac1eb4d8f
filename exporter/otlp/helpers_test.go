package otlp_test

import (
	"errors"

	"github.com/macprof/macprof/exporter/otlp"
)

func ptr[T any](v T) *T { return &v }

func asExportError(err error, xe **otlp.ExportError) bool { return errors.As(err, xe) }
