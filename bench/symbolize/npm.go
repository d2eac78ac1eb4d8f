package main

import (
	"archive/tar"
	"compress/gzip"
	"debug/macho"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// npmTarget is a released macOS binary fetched from the npm registry, where
// its makers publish it: the binaries issue 32 measured symbolization on.
type npmTarget struct {
	name, pkg, version, file, arch string
}

// npmTargets are Swift (swiftlint), Rust (sentry-cli, a universal binary,
// and biome) and C/C++ (libvips) at fixed versions.
var npmTargets = []npmTarget{
	{"swiftlint", "@expo/swiftlint", "0.57.1", "package/bin/darwin-arm64/swiftlint", "arm64"},
	{"sentry-cli", "@sentry/cli-darwin", "3.8.0", "package/bin/sentry-cli", "arm64"},
	{"libvips-cpp.dylib", "@img/sharp-libvips-darwin-arm64", "1.3.4", "package/lib/libvips-cpp.8.18.7.dylib", "arm64"},
	{"biome", "@biomejs/cli-darwin-arm64", "2.6.8", "package/biome", "arm64"},
}

// benchNPM times macprof symbolize and llvm-symbolizer on n addresses of
// each npm target's __text, for its arch; a target that cannot be fetched
// is said and skipped.
func benchNPM(n, runs int, macprof, before, llvm string) error {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	cache = filepath.Join(cache, "macprof-bench", "npm")
	for _, t := range npmTargets {
		bin, err := t.fetch(cache)
		if err != nil {
			fmt.Printf("%s: skipped: %v\n", t.name, err)
			continue
		}
		in, err := machoAddresses(bin, t.arch, n)
		if err != nil {
			return err
		}
		if err := benchTarget(fmt.Sprintf("%s (%s %s, %s)", t.name, t.pkg, t.version, t.arch), bin, in, runs, before,
			[]string{macprof, "symbolize", "--arch", t.arch, "-o", bin},
			[]string{llvm, "--default-arch=" + t.arch, "--obj=" + bin, "--no-inlines"}); err != nil {
			return err
		}
	}
	return nil
}

// fetch returns the path of t's binary in cache, downloading its package
// with npm pack the first time.
func (t npmTarget) fetch(cache string) (string, error) {
	dir := filepath.Join(cache, strings.NewReplacer("@", "", "/", "-").Replace(t.pkg)+"-"+t.version)
	bin := filepath.Join(dir, filepath.Base(t.file))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("npm", "pack", "--silent", "--pack-destination", dir, t.pkg+"@"+t.version)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("npm pack %s@%s: %v", t.pkg, t.version, err)
	}
	tgz := filepath.Join(dir, strings.TrimSpace(string(out)))
	defer os.Remove(tgz)
	if err := extractFile(tgz, t.file, bin); err != nil {
		return "", fmt.Errorf("%s: %v", tgz, err)
	}
	return bin, nil
}

// extractFile writes the file named name in the gzipped tar archive tgz to
// dst.
func extractFile(tgz, name, dst string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	r := tar.NewReader(z)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("no %s in it", name)
		}
		if err != nil {
			return err
		}
		if h.Name != name {
			continue
		}
		tmp := dst + ".part"
		w, err := os.Create(tmp)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, r); err != nil {
			w.Close()
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		return os.Rename(tmp, dst)
	}
}

// machoAddresses returns n random addresses in the __text section of bin's
// arch slice (bin thin or universal), one a line.
func machoAddresses(bin, arch string, n int) ([]byte, error) {
	cpu := macho.CpuArm64
	if arch == "x86_64" {
		cpu = macho.CpuAmd64
	}
	var m *macho.File
	if fat, err := macho.OpenFat(bin); err == nil {
		defer fat.Close()
		for _, a := range fat.Arches {
			if a.Cpu == cpu {
				m = a.File
			}
		}
		if m == nil {
			return nil, fmt.Errorf("%s: no %s slice", bin, arch)
		}
	} else {
		f, err := macho.Open(bin)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		m = f
	}
	text := m.Section("__text")
	if text == nil || text.Size == 0 {
		return nil, fmt.Errorf("%s: no __text", bin)
	}
	rng := rand.New(rand.NewSource(1))
	var in strings.Builder
	for range n {
		fmt.Fprintf(&in, "%#x\n", text.Addr+uint64(rng.Int63n(int64(text.Size))))
	}
	return []byte(in.String()), nil
}
