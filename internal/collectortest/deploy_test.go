package collectortest

import (
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The shipped collector configuration is valid for the collector the
// manifest builds (with the profiles feature gate), and names no component
// by a deprecated name.
func TestDeployConfigValidates(t *testing.T) {
	bin := Binary(t)
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "validate", "--config", filepath.Join(root, "deploy", "otel-collector.yaml"), FeatureGate)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deploy/otel-collector.yaml does not validate: %v\n%s", err, out)
	}
	// The collector warns of deprecated names when it builds its
	// pipelines, not when it validates: start it.
	c := StartDeploy(t, map[string]string{"PYROSCOPE_OTLP_ENDPOINT": "127.0.0.1:1"})
	c.Stop()
	if strings.Contains(c.Log(), "deprecated") {
		t.Errorf("the collector warns of a deprecated name in deploy/otel-collector.yaml:\n%s", c.Log())
	}
	// Without the feature gate the profiles pipeline is refused: the gate
	// is what the docs say it is.
	cmd = exec.Command(bin, "validate", "--config", filepath.Join(root, "deploy", "otel-collector.yaml"))
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("config validated without %s; output:\n%s", FeatureGate, out)
	}
}

// A second build-collector.sh run uses the cache: fast, same path.
func TestBuildScriptCaches(t *testing.T) {
	if os.Getenv("MACPROF_COLLECTOR") != "" {
		t.Fatal("MACPROF_COLLECTOR is set: this test checks the build script's cache, unset it")
	}
	bin := Binary(t)
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := exec.Command("/bin/sh", filepath.Join(root, "deploy", "build-collector.sh")).Output()
	if err != nil {
		t.Fatalf("build-collector.sh: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != bin {
		t.Errorf("second run printed %q, want %q", got, bin)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cached run took %v: the cache was not used", d)
	}
}

// The launchd plist is well-formed XML with the keys launchd needs.
func TestLaunchdPlist(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "deploy", "com.macprof.agent.plist"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := xml.NewDecoder(f)
	var keys, texts []string
	inKey := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("plist is not well-formed XML: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			inKey = x.Name.Local == "key"
			if x.Name.Local == "true" || x.Name.Local == "false" {
				texts = append(texts, "<"+x.Name.Local+">")
			}
		case xml.EndElement:
			inKey = false
		case xml.CharData:
			if inKey {
				keys = append(keys, string(x))
			}
			if t := strings.TrimSpace(string(x)); t != "" {
				texts = append(texts, t)
			}
		}
	}
	for _, k := range []string{"Label", "ProgramArguments", "RunAtLoad", "KeepAlive", "ExitTimeOut", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		found := false
		for _, got := range keys {
			found = found || got == k
		}
		if !found {
			t.Errorf("plist has no %s key", k)
		}
	}
	// Crashes restart, exits (a config error's 2) do not: KeepAlive is
	// {Crashed: true}, never SuccessfulExit, and panics crash by signal.
	seq := strings.Join(texts, " ")
	for _, want := range []string{"ProgramArguments /usr/local/bin/macprof-agent --config", "KeepAlive Crashed <true>", "GOTRACEBACK crash"} {
		if !strings.Contains(seq, want) {
			t.Errorf("plist lacks %q: %s", want, seq)
		}
	}
	if strings.Contains(seq, "SuccessfulExit") {
		t.Errorf("plist uses SuccessfulExit, which restarts a config error (status 2): %s", seq)
	}
}

// The systemd unit passes systemd-analyze verify where systemd is present
// (its only complaint here may be the binary missing from this machine).
func TestSystemdUnit(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(root, "deploy", "macprof-agent.service")
	data, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ExecStart=/usr/local/bin/macprof-agent --config", "KillSignal=SIGTERM", "CAP_SYS_PTRACE", "[Install]",
		"Restart=on-failure", "RestartPreventExitStatus=2", "Environment=GOTRACEBACK=crash"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("unit lacks %q", want)
		}
	}
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatalf("systemd-analyze not found (apt-get install systemd) to verify %s", unit)
	}
	out, _ := exec.Command(sa, "verify", unit).CombinedOutput()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line != "" && !strings.Contains(line, "/usr/local/bin/macprof-agent is not executable") {
			t.Errorf("systemd-analyze verify: %s", line)
		}
	}
}

func TestDecodeLengthPrefixedBounds(t *testing.T) {
	if ds, err := DecodeLengthPrefixed([]byte{0xff, 0xff, 0xff, 0xff, 1}); err == nil {
		t.Errorf("huge length accepted: %v", ds)
	}
	if ds, err := DecodeLengthPrefixed([]byte{0, 0, 0, 9, 1, 2}); err != nil || len(ds) != 0 {
		t.Errorf("partial message: %v %v", ds, err)
	}
	if _, err := DecodeLengthPrefixed([]byte{0, 0, 0, 2, 0xff, 0xff}); err == nil {
		t.Error("garbage message accepted")
	}
}
