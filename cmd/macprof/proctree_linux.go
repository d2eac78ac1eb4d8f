//go:build linux

package main

import (
	"bytes"
	"os"
	"strconv"
)

// descendants returns the PIDs of every living descendant of root, from
// the parent links in /proc/PID/stat.
func descendants(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	parent := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(string(f[1])); err == nil {
			parent[pid] = ppid
		}
	}
	var out []int
	for pid := range parent {
		for p, depth := parent[pid], 0; p != 0 && depth < 64; p, depth = parent[p], depth+1 {
			if p == root {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}
