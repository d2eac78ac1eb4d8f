// Package pyroscopetest runs a real Grafana Pyroscope server for tests and
// reads back what it stored through its query API. The server is the one in
// the shared folder beside the repository (../shared/pyroscope, or
// $MACPROF_SHARED/pyroscope): a test that needs it is skipped, with a
// message saying so, where that folder is absent.
package pyroscopetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// CPUProfileType is the profile type Pyroscope files CPU profiles under, both
// from /ingest (pprof cpu/nanoseconds) and from OTLP.
const CPUProfileType = "process_cpu:cpu:nanoseconds:cpu:nanoseconds"

// SharedDir returns the shared folder that holds pyroscope/: $MACPROF_SHARED
// when set, else the first "shared" folder beside the module root or one of
// its ancestors (the repository's ../shared in CI, where the checkout sits
// beside it; /work/shared from a worktree under /work/wt/NAME). It returns ""
// when there is none.
func SharedDir() string {
	if d := os.Getenv("MACPROF_SHARED"); d != "" {
		return d
	}
	root, err := moduleRoot()
	if err != nil {
		return ""
	}
	for dir := filepath.Dir(root); ; dir = filepath.Dir(dir) {
		cand := filepath.Join(dir, "shared")
		if st, err := os.Stat(filepath.Join(cand, "pyroscope", "start.sh")); err == nil && !st.IsDir() {
			return cand
		}
		if parent := filepath.Dir(dir); parent == dir {
			return ""
		}
	}
}

// moduleRoot is the directory of the go.mod above this source file.
func moduleRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("pyroscopetest: cannot locate the source tree")
	}
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if parent := filepath.Dir(dir); parent == dir {
			return "", errors.New("pyroscopetest: no go.mod above " + file)
		}
	}
}

// Server is a running Pyroscope.
type Server struct {
	// URL is the HTTP base URL: /ingest, OTLP over HTTP
	// (/v1development/profiles) and the queries.
	URL string
	// Addr is URL's host:port, where OTLP over gRPC is served too.
	Addr string
	// Dir holds the server's data and log.
	Dir string
	pid int
	t   testing.TB
}

// Start starts a Pyroscope server on free loopback ports, stopped when the
// test ends. It skips the test when the shared folder is absent and fails
// it when the server does not start.
func Start(t testing.TB) *Server {
	t.Helper()
	shared := SharedDir()
	if shared == "" {
		t.Skip("pyroscopetest: no shared/pyroscope beside the repository (set MACPROF_SHARED to the folder that holds pyroscope/start.sh): the real-Pyroscope test cannot run here")
	}
	script := filepath.Join(shared, "pyroscope", "start.sh")
	if _, err := os.Stat(script); err != nil {
		t.Skipf("pyroscopetest: %v: the real-Pyroscope test cannot run here", err)
	}
	dir := t.TempDir()
	ports := freePorts(t, 4)
	cmd := exec.Command("/bin/bash", script, dir)
	cmd.Env = append(os.Environ(),
		fmt.Sprintf("PYRO_HTTP=%d", ports[0]), fmt.Sprintf("PYRO_GRPC=%d", ports[1]),
		fmt.Sprintf("PYRO_GOSSIP=%d", ports[2]), fmt.Sprintf("PYRO_RAFT=%d", ports[3]))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	s := &Server{Dir: dir, t: t}
	if b, rerr := os.ReadFile(filepath.Join(dir, "pid")); rerr == nil {
		fmt.Sscan(string(b), &s.pid)
	}
	t.Cleanup(s.stop)
	if err != nil {
		t.Fatalf("pyroscopetest: %s: %v\n%s\nserver log:\n%s", script, err, stderr.String(), s.Log())
	}
	s.URL = strings.TrimSpace(stdout.String())
	s.Addr = strings.TrimPrefix(s.URL, "http://")
	return s
}

// stop ends the server (SIGTERM, then SIGKILL after 10 s).
func (s *Server) stop() {
	if s.pid <= 0 {
		return
	}
	p, err := os.FindProcess(s.pid)
	if err != nil {
		return
	}
	_ = p.Signal(syscall.SIGTERM)
	for i := 0; i < 100; i++ {
		if p.Signal(syscall.Signal(0)) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = p.Kill()
}

// Log returns the end of the server's log.
func (s *Server) Log() string {
	b, err := os.ReadFile(filepath.Join(s.Dir, "server.log"))
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	if len(b) > 8<<10 {
		b = b[len(b)-8<<10:]
	}
	return string(b)
}

// freePorts returns n distinct free loopback ports.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("pyroscopetest: no free port: %v", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// query POSTs a Connect JSON request to a querier method and decodes the
// answer into out.
func (s *Server) query(method string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	res, err := http.Post(s.URL+"/querier.v1.QuerierService/"+method, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d: %s", method, res.StatusCode, data)
	}
	return json.Unmarshal(data, out)
}

// span is the query range: six hours back to a minute from now, wide enough
// for any window a test pushes.
func span() (start, end int64) {
	now := time.Now()
	return now.Add(-6 * time.Hour).UnixMilli(), now.Add(time.Minute).UnixMilli()
}

// LabelValues returns the values of a label (service_name: the services).
func (s *Server) LabelValues(name string) ([]string, error) {
	start, end := span()
	var out struct {
		Names []string `json:"names"`
	}
	err := s.query("LabelValues", map[string]any{"name": name, "start": start, "end": end}, &out)
	sort.Strings(out.Names)
	return out.Names, err
}

// Series returns the label sets of the series matching a selector
// ({service_name="x"}), each as a map.
func (s *Server) Series(selector string) ([]map[string]string, error) {
	start, end := span()
	var out struct {
		LabelsSet []struct {
			Labels []struct{ Name, Value string } `json:"labels"`
		} `json:"labelsSet"`
	}
	err := s.query("Series", map[string]any{"matchers": []string{selector}, "start": start, "end": end}, &out)
	var sets []map[string]string
	for _, ls := range out.LabelsSet {
		m := map[string]string{}
		for _, l := range ls.Labels {
			m[l.Name] = l.Value
		}
		sets = append(sets, m)
	}
	return sets, err
}

// Flame is a merged flame graph as SelectMergeStacktraces returns it.
type Flame struct {
	Names []string
	// Levels holds, per depth, quadruples (x offset, total, self, name
	// index), the offsets relative to the previous node's end.
	Levels [][]int64
	Total  int64
}

// Merge returns the flame graph of a profile type (CPUProfileType) over
// the series a selector picks.
func (s *Server) Merge(profileType, selector string) (*Flame, error) {
	start, end := span()
	var out struct {
		Flamegraph struct {
			Names  []string `json:"names"`
			Levels []struct {
				Values []json.Number `json:"values"`
			} `json:"levels"`
			Total json.Number `json:"total"`
		} `json:"flamegraph"`
	}
	err := s.query("SelectMergeStacktraces", map[string]any{"profileTypeID": profileType, "labelSelector": selector,
		"start": start, "end": end, "maxNodes": 16384}, &out)
	if err != nil {
		return nil, err
	}
	f := &Flame{Names: out.Flamegraph.Names}
	if out.Flamegraph.Total != "" {
		if f.Total, err = out.Flamegraph.Total.Int64(); err != nil {
			return nil, err
		}
	}
	for _, l := range out.Flamegraph.Levels {
		vs := make([]int64, len(l.Values))
		for i, v := range l.Values {
			if vs[i], err = v.Int64(); err != nil {
				return nil, err
			}
		}
		f.Levels = append(f.Levels, vs)
	}
	return f, nil
}

// Self returns the self value of every function in the flame graph (summed
// over the nodes that name it).
func (f *Flame) Self() map[string]int64 {
	out := map[string]int64{}
	for _, l := range f.Levels {
		for i := 0; i+3 < len(l); i += 4 {
			if n := l[i+3]; n >= 0 && int(n) < len(f.Names) {
				out[f.Names[n]] += l[i+2]
			}
		}
	}
	return out
}

// Functions returns the sorted names of the flame graph's functions.
func (f *Flame) Functions() []string {
	var out []string
	for _, n := range f.Names {
		if n != "total" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// WaitMerge polls Merge until the flame graph's total reaches want (data
// becomes visible a moment after a push) or the timeout passes; it returns
// the last answer.
func (s *Server) WaitMerge(profileType, selector string, want int64, timeout time.Duration) (*Flame, error) {
	deadline := time.Now().Add(timeout)
	for {
		f, err := s.Merge(profileType, selector)
		if err == nil && f.Total >= want || time.Now().After(deadline) {
			return f, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}
