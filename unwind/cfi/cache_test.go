package cfi

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/unwind"
)

// TestResolverLoadsOnFirstUse: a table is built once, on the first lookup
// of its object, and found through any mapping of it; addresses outside
// every object find nothing.
func TestResolverLoadsOnFirstUse(t *testing.T) {
	var loads atomic.Int32
	tab := FromRows(unwind.ArchAMD64, []Row{{Off: 0x1000, Rule: unwind.Rule{CFA: unwind.CFASP, CFAOff: 8, RA: unwind.RegSaved, RAOff: -8}}}, 0x2000)
	c := NewCache(CacheOptions{Load: func(path string) (*Table, error) {
		loads.Add(1)
		if path == "bad" {
			return nil, errors.New("no such object")
		}
		return tab, nil
	}})
	r := NewResolver(c, []Object{
		{Start: 0x10_0000, Limit: 0x10_2000, Offset: 0, Key: "id:a", Path: "a"},
		{Start: 0x20_0000, Limit: 0x20_2000, Offset: 0, Key: "id:a", Path: "a"}, // a second process's mapping, same object
		{Start: 0x30_0000, Limit: 0x30_1000, Key: "id:bad", Path: "bad"},
		{Start: 0x40_0000, Limit: 0x40_1000}, // the vDSO: no file
	})
	if loads.Load() != 0 {
		t.Fatal("a table was built before any lookup")
	}
	got, lo, hi, bias := r.Find(0x10_1010)
	if got != tab || lo != 0x10_0000 || hi != 0x10_2000 || 0x10_1010-bias != 0x1010 {
		t.Fatalf("Find: %p [%#x,%#x) bias %#x", got, lo, hi, bias)
	}
	if got, _, _, _ := r.Find(0x20_1010); got != tab {
		t.Fatalf("second mapping: %p", got)
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("%d builds of one object, want 1", n)
	}
	if got, _, _, _ := r.Find(0x40_0010); got != nil {
		t.Error("a table for the vDSO")
	}
	for _, pc := range []uint64{0, 0x10_2000, 0x30_0010, ^uint64(0)} {
		if got, _, _, _ := r.Find(pc); got != nil {
			t.Errorf("%#x: found a table", pc)
		}
	}
	if !r.Covers(0x40_0010) || r.Covers(0x50_0000) {
		t.Error("Covers: the vDSO's mapping not covered, or an unmapped address covered")
	}
	if c.Err("id:bad") == nil {
		t.Error("the failed build's error is not kept")
	}
	if a := testing.AllocsPerRun(100, func() { r.Find(0x10_1010) }); a != 0 {
		t.Errorf("%v allocations per Find of a built table", a)
	}
}

// TestCacheWaitsBounded: a build that takes longer than the wait leaves
// the lookup without a table, and a later lookup gets it once built.
func TestCacheWaitsBounded(t *testing.T) {
	release := make(chan struct{})
	tab := &Table{arch: unwind.ArchAMD64}
	c := NewCache(CacheOptions{Wait: 10 * time.Millisecond, Load: func(string) (*Table, error) {
		<-release
		return tab, nil
	}})
	start := time.Now()
	if got := c.Table("k", "p"); got != nil {
		t.Fatal("a table before its build finished")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("waited %v", d)
	}
	close(release)
	testprog.WaitFor(t, 5*time.Second, func() bool { return c.Table("k", "p") != nil }, "the finished build to be picked up")
}

// TestCacheBounded: at most MaxTables tables stay cached, and at most
// maxLoads builds run at once.
func TestCacheBounded(t *testing.T) {
	block := make(chan struct{})
	var running atomic.Int32
	c := NewCache(CacheOptions{MaxTables: 2, Wait: time.Millisecond, Load: func(string) (*Table, error) {
		running.Add(1)
		<-block
		return &Table{}, nil
	}})
	for i := 0; i < 10; i++ {
		c.Table(string(rune('a'+i)), "p")
	}
	time.Sleep(20 * time.Millisecond)
	if n := running.Load(); n > maxLoads {
		t.Errorf("%d builds at once, want at most %d", n, maxLoads)
	}
	close(block)
	if n := c.tables.Len(); n > 2 {
		t.Errorf("%d tables cached, want at most 2", n)
	}
}

// TestResolverRulesEqualTheTables: a resolver over python3's lazily
// indexed text (mapped twice, the second mapping starting inside the
// first, where it wins) answers every address as the table does, through
// its rule cache, for addresses in order and scattered.
func TestResolverRulesEqualTheTables(t *testing.T) {
	_, python := systemObjects(t)
	tab, err := Load(python)
	if err != nil {
		t.Fatal(err)
	}
	rows := wholeBuild(t, python).AllRows()
	first, span := rows[0].Off, rows[len(rows)-1].Off-rows[0].Off
	const a, b = 0x10_0000_0000, 0x20_0000_0000
	r := NewResolver(NewCache(CacheOptions{Load: func(string) (*Table, error) { return tab, nil }}), []Object{
		{Start: a, Limit: a + span, Offset: first, Key: "py", Path: "python3"},
		{Start: a + span/2, Limit: b, Offset: first + span/4, Key: "py", Path: "python3"},
	})
	want := func(pc uint64) *unwind.Rule {
		if pc < a+span/2 {
			return tab.Find(pc - a + first)
		}
		return tab.Find(pc - (a + span/2) + first + span/4)
	}
	check := func(pc uint64) {
		got, fp := r.Rule(pc)
		if w := want(pc); fp || got != w {
			t.Fatalf("%#x: %v (frame pointers %v), the table says %v", pc, got, fp, w)
		}
	}
	for pc := uint64(a); pc < a+span; pc += 3 {
		check(pc)
	}
	x := uint64(1)
	for range 200000 {
		x = x*6364136223846793005 + 1442695040888963407
		check(a + x>>20%span)
	}
}
