//go:build linux && (amd64 || arm64)

package record

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/internal/testprog"
	mprofile "github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/unwind"
)

// TestRecordNamesEveryThread: a command whose three threads and two child
// processes (each with a thread of its own) name themselves with
// prctl(PR_SET_NAME) and burn CPU is recorded as the CLI records it,
// whichever way its samples come (--unwind fp: process rings for all;
// auto: its threads' own rings, descendant rings for its children). Every
// sample of a thread has a name, none has thread id 0, and each worker's
// samples in named_burn carry the name it gave itself, under the
// command's PID or its child's. (Before the rings read the kernel's comm and fork
// records, the children's threads had no name; with auto, samples of the
// command's threads drained after a child's carried the child's PID.)
func TestRecordNamesEveryThread(t *testing.T) {
	bin := testprog.BuildC(t, "namedthreads.c")
	for _, m := range []unwind.Method{unwind.MethodAuto, unwind.MethodFP} {
		t.Run(m.String(), func(t *testing.T) {
			p := recordLaunchedPprof(t, 199, m, bin, "3", "2", "200")
			type thread struct {
				pid  int64
				name string
			}
			threads := map[int64]thread{} // by tid
			burned := map[string]int64{}  // samples in named_burn, by thread name
			var bad []string
			for _, s := range p.Sample {
				tids, pids, names := s.NumLabel[exporter.LabelThreadID], s.NumLabel[exporter.LabelPID], s.Label[exporter.LabelThread]
				if len(pids) != 1 {
					bad = append(bad, fmt.Sprintf("a sample with pid labels %v", pids))
					continue
				}
				if len(tids) == 0 {
					continue // the CPU time of threads gone before listed
				}
				if len(tids) != 1 || tids[0] == 0 || len(names) != 1 || names[0] == "" {
					bad = append(bad, fmt.Sprintf("a sample of PID %d with thread_id %v and thread %q", pids[0], tids, names))
					continue
				}
				th := thread{pids[0], names[0]}
				if !sampleHas(s, "named_burn") {
					continue // (the main thread renames itself as it starts)
				}
				if had, ok := threads[tids[0]]; ok && had != th {
					bad = append(bad, fmt.Sprintf("thread %d has samples in named_burn as %+v and as %+v", tids[0], had, th))
				}
				threads[tids[0]] = th
				burned[th.name] += s.Value[0]
			}
			t.Logf("threads %v; samples in named_burn by thread %v", threads, burned)
			for i, b := range bad {
				if i == 5 {
					t.Errorf("... and %d more", len(bad)-i)
					break
				}
				t.Error(b)
			}
			// Who is who: the command's PID is its workers'; each child's
			// thread shares its child's PID, which is the child's tid.
			pidOf := map[string]int64{}
			for tid, th := range threads {
				pidOf[th.name] = th.pid
				if strings.HasPrefix(th.name, "nt-kid") && !strings.HasPrefix(th.name, "nt-kidw") && tid != th.pid {
					t.Errorf("child %s: thread %d under PID %d, want its own", th.name, tid, th.pid)
				}
			}
			want := []string{"nt-w0", "nt-w1", "nt-w2", "nt-kid0", "nt-kid1", "nt-kidw0", "nt-kidw1"}
			for _, name := range want {
				if burned[name] == 0 {
					t.Errorf("no sample of %s in named_burn", name)
				}
			}
			for name, n := range burned {
				if !slices.Contains(want, name) {
					t.Errorf("%d samples in named_burn of a thread named %q, want one of %v", n, name, want)
				}
			}
			for i := range 2 {
				kid, kidw := fmt.Sprintf("nt-kid%d", i), fmt.Sprintf("nt-kidw%d", i)
				if pidOf[kidw] != pidOf[kid] {
					t.Errorf("%s is under PID %d, its process %s under %d", kidw, pidOf[kidw], kid, pidOf[kid])
				}
				if pidOf[kid] == pidOf["nt-w0"] {
					t.Errorf("%s is under the command's PID %d", kid, pidOf[kid])
				}
			}
			if pidOf["nt-w0"] != pidOf["nt-w1"] || pidOf["nt-w1"] != pidOf["nt-w2"] {
				t.Errorf("the command's threads under several PIDs: %d, %d, %d", pidOf["nt-w0"], pidOf["nt-w1"], pidOf["nt-w2"])
			}
		})
	}
}

// sampleHas reports whether a function named fn is on s's stack.
func sampleHas(s *profile.Sample, fn string) bool {
	for _, l := range s.Location {
		for _, ln := range l.Line {
			if ln.Function != nil && ln.Function.Name == fn {
				return true
			}
		}
	}
	return false
}

// recordLaunchedPprof records cmd as recordLaunched does and returns the
// pprof profile written.
func recordLaunchedPprof(t *testing.T, hz int, m unwind.Method, cmd ...string) *profile.Profile {
	t.Helper()
	out, _ := runRecord(t, Config{Command: cmd, Hz: hz, Mode: mprofile.ModeCPU, MaxFrames: 128, Unwind: m}, exporter.FormatPprof, 60*time.Second)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
