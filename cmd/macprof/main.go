// Command macprof is a sampling CPU profiler for macOS and Linux.
//
// Each subcommand lives in its own file and registers itself in init; the
// file turns flags into a configuration and prints. What record, agent and
// snapshot do lives in the packages of those names, and the OS backend they
// use is picked in target_*.go.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// command is one macprof subcommand.
type command struct {
	name    string
	summary string // one line for the command list
	// run parses args (everything after the subcommand name) and runs.
	// It returns the process exit status.
	run func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("macprof: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run([]string{"--help"}, stdout, stderr)
			}
		}
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "--version", "-version", "-V":
		args[0] = "version"
	}
	c, ok := commands[args[0]]
	if !ok {
		what := "command"
		if strings.HasPrefix(args[0], "-") {
			what = "flag"
		}
		fmt.Fprintf(stderr, "macprof: unknown %s %q\nUsage: macprof <command> [flags] [arguments]\nrun 'macprof --help' for the commands\n", what, args[0])
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "macprof: a sampling CPU profiler for macOS and Linux.")
	fmt.Fprintln(w, "\nUsage: macprof <command> [flags] [arguments]")
	fmt.Fprintln(w, "       macprof --version")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'macprof <command> --help' for a command's flags and examples.")
}
