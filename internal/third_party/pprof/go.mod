module github.com/google/pprof

go 1.25.0
