package agent

import (
	"encoding/json"
	"flag"
	"fmt"
	"sort"
	"strconv"

	"github.com/macprof/macprof/internal/safefile"
)

// ApplyConfigFile sets the flags of fs from the JSON file that args name
// with --config, if any, before args are parsed, so that the command line
// wins over the file.
func ApplyConfigFile(fs *flag.FlagSet, args []string) error {
	if path := configPathFrom(args); path != "" {
		return applyConfigFile(fs, path)
	}
	return nil
}

// configPathFrom finds --config in args before the flags are parsed.
func configPathFrom(args []string) string {
	for i, a := range args {
		for _, p := range []string{"--config", "-config"} {
			if a == p && i+1 < len(args) {
				return args[i+1]
			}
			if len(a) > len(p)+1 && a[:len(p)+1] == p+"=" {
				return a[len(p)+1:]
			}
		}
		if a == "--" {
			break
		}
	}
	return ""
}

// maxConfigBytes bounds the config file: an agent's settings take a few
// hundred bytes, and a path that reads for ever (/dev/zero) must fail.
const maxConfigBytes = 1 << 20

// applyConfigFile sets flags from a JSON object: strings, numbers, booleans,
// or arrays of them for repeatable flags. Only a regular file is read (a
// FIFO would block), up to maxConfigBytes.
func applyConfigFile(fs *flag.FlagSet, path string) error {
	b, err := safefile.ReadFile(path, maxConfigBytes, false)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "config" || fs.Lookup(k) == nil {
			return fmt.Errorf("config %s: unknown setting %q (settings are the agent's flag names)", path, k)
		}
		vals, ok := m[k].([]any)
		if !ok {
			vals = []any{m[k]}
		}
		for _, v := range vals {
			s := fmt.Sprint(v)
			switch v := v.(type) {
			case float64:
				s = strconv.FormatFloat(v, 'f', -1, 64)
			case nil, []any, map[string]any:
				// fmt.Sprint would make "<nil>" or "map[...]" a value.
				return fmt.Errorf("config %s: %s: want a string, number or boolean (or an array of them), not %s", path, k, jsonKind(v))
			}
			if err := fs.Set(k, s); err != nil {
				return fmt.Errorf("config %s: %s: %w", path, k, err)
			}
		}
	}
	return nil
}
