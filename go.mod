module github.com/macprof/macprof

go 1.26.0

require (
	github.com/chzyer/readline v1.5.1 // indirect
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe // indirect
	github.com/hashicorp/golang-lru/v2 v2.0.7 // indirect
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724 // indirect
	go.opentelemetry.io/proto/slim/otlp v1.11.1 // indirect
	go.opentelemetry.io/proto/slim/otlp/collector/profiles/v1development v0.4.1 // indirect
	go.opentelemetry.io/proto/slim/otlp/profiles/v1development v0.4.1 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/grpc v1.85.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
