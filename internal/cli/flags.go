// Package cli is macprof's command-line flags: GNU-style long aliases of
// short flags (-p and --pid), durations in seconds or Go's form, PID lists,
// and usage errors that print one line and the short usage, not the help.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FlagSet is a command's flags with its synopsis, so that a usage error can
// print the short usage rather than the whole help, and with long aliases
// of short flags (-p and --pid), which the help lists together.
type FlagSet struct {
	*flag.FlagSet
	synopsis    []string          // one usage line each, without "Usage: "
	description string            // the help text between the synopsis and the flags
	aliasOf     map[string]string // long alias -> the flag it stands for
	longOf      map[string]string // flag -> its long alias
}

// NewFlagSet returns the flags of command name. synopsis holds its usage
// lines ("macprof record -p PID [flags]"), one per line; description is
// what --help prints between them and the flags (examples, defaults).
func NewFlagSet(name, synopsis, description string, stderr io.Writer) *FlagSet {
	fs := &FlagSet{
		FlagSet:     flag.NewFlagSet(name, flag.ContinueOnError),
		synopsis:    strings.Split(strings.TrimSpace(synopsis), "\n"),
		description: strings.TrimSpace(description),
		aliasOf:     map[string]string{},
		longOf:      map[string]string{},
	}
	fs.SetOutput(stderr)
	fs.Usage = fs.help
	return fs
}

// help prints the whole help: synopsis, description, flags.
func (fs *FlagSet) help() {
	w := fs.Output()
	fs.writeSynopsis(w)
	fmt.Fprintf(w, "\n%s\n\nFlags:\n", fs.description)
	fs.printDefaults(w)
}

func (fs *FlagSet) writeSynopsis(w io.Writer) {
	for i, s := range fs.synopsis {
		if i == 0 {
			fmt.Fprintf(w, "Usage: %s\n", strings.TrimSpace(s))
		} else {
			fmt.Fprintf(w, "       %s\n", strings.TrimSpace(s))
		}
	}
}

// Alias makes --long another name of the flag short (defined before).
func (fs *FlagSet) Alias(short, long string) {
	f := fs.Lookup(short)
	if f == nil {
		panic("macprof: alias of an undefined flag " + short)
	}
	fs.Var(f.Value, long, f.Usage)
	fs.aliasOf[long], fs.longOf[short] = short, long
}

// dash writes a flag name as the help shows it: -p, --pid.
func dash(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// printDefaults lists the flags, each alias beside its flag, in the form
// of flag.PrintDefaults but with GNU-style dashes (Go's flag package takes
// one dash or two alike).
func (fs *FlagSet) printDefaults(w io.Writer) {
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := fs.aliasOf[f.Name]; ok {
			return
		}
		arg, usage := flag.UnquoteUsage(f)
		names := dash(f.Name)
		if long, ok := fs.longOf[f.Name]; ok {
			names += ", " + dash(long)
		}
		line := "  " + names
		if arg != "" {
			line += " " + arg
		}
		usage = strings.ReplaceAll(usage, "\n", "\n    \t")
		if !isZeroValue(f) {
			if reflect.TypeOf(f.Value).String() == "*flag.stringValue" {
				usage += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				usage += fmt.Sprintf(" (default %v)", f.DefValue)
			}
		}
		fmt.Fprintf(w, "%s\n    \t%s\n", line, usage)
	})
}

// isZeroValue reports whether f's default is its type's zero value, which
// the help does not print (as flag.PrintDefaults does).
func isZeroValue(f *flag.Flag) bool {
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	v, ok := z.Interface().(flag.Value)
	if !ok {
		return false
	}
	return f.DefValue == v.String() || f.DefValue == "" || f.DefValue == "[]"
}

// ParseArgs parses args. -h/--help prints the whole help and returns status 0,
// a bad flag prints the short usage and returns 2; ok reports whether the
// command should go on.
func (fs *FlagSet) ParseArgs(args []string) (status int, ok bool) {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return 0, false
	}
	return fs.UsageError("%s", flagError(err)), false
}

// flagNameRE finds a flag name in the flag package's errors, which always
// write it with one dash. It and secondsRE are compiled on first use, not
// at start-up, which every command pays.
var flagNameRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(flag |unknown flag |argument: )-([A-Za-z0-9][A-Za-z0-9._-]*)`)
})

// flagError rewords the flag package's error: flag names as the help
// writes them (--pid, -p) and "unknown flag" for an undefined one.
func flagError(err error) string {
	msg := strings.Replace(err.Error(), "flag provided but not defined: ", "unknown flag ", 1)
	return flagNameRE().ReplaceAllStringFunc(msg, func(m string) string {
		sub := flagNameRE().FindStringSubmatch(m)
		return sub[1] + dash(sub[2])
	})
}

// UsageError prints what is wrong in one line, then the short usage and
// where the help is, and returns the usage error status, 2.
func (fs *FlagSet) UsageError(format string, a ...any) int {
	w := fs.Output()
	fmt.Fprintf(w, "macprof %s: %s\n", fs.Name(), fmt.Sprintf(format, a...))
	fs.writeSynopsis(w)
	fmt.Fprintf(w, "run 'macprof %s --help' for more\n", fs.Name())
	return 2
}

// durationValue is a duration flag that takes seconds (5, 2.5), as perf and
// samply do, as well as Go durations (2s, 500ms, 1m30s).
type durationValue time.Duration

func (d *durationValue) String() string { return time.Duration(*d).String() }

func (d *durationValue) Set(s string) error {
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

// Duration defines a duration flag that takes seconds or a Go duration,
// under name and, when long is not "", under --long too.
func (fs *FlagSet) Duration(name, long string, value time.Duration, usage string) *time.Duration {
	p := new(time.Duration)
	*p = value
	fs.Var((*durationValue)(p), name, usage)
	if long != "" {
		fs.Alias(name, long)
	}
	return p
}

var secondsRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)$`) })

// errDuration says what a duration flag takes.
var errDuration = errors.New("want seconds (5, 2.5) or a duration (2s, 500ms, 1m30s)")

// ParseDuration reads seconds as a decimal number, else a Go duration.
func ParseDuration(s string) (time.Duration, error) {
	if !secondsRE().MatchString(s) {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, errDuration
		}
		return d, nil
	}
	// time.ParseDuration reads the decimal digits exactly, where a float
	// would round 7000000001 seconds.
	d, err := time.ParseDuration(s + "s")
	if err != nil {
		return 0, fmt.Errorf("%s seconds is out of range", s)
	}
	if d == 0 && strings.Trim(s, "+-0.") != "" {
		return 0, fmt.Errorf("%s seconds is shorter than a nanosecond", s)
	}
	return d, nil
}

// PIDs collects PIDs: repeated flags and comma-separated lists
// (-p 12,34, as perf takes them). With one set, a second PID is an error.
type PIDs struct {
	pids []int
	one  bool
}

func (p *PIDs) String() string {
	if p == nil {
		return ""
	}
	s := make([]string, len(p.pids))
	for i, v := range p.pids {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (p *PIDs) Set(v string) error {
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return fmt.Errorf("not a PID (a positive number): %q", f)
		}
		if p.one && len(p.pids) > 0 {
			return errors.New("give one process: this command takes one PID")
		}
		p.pids = append(p.pids, n)
	}
	return nil
}

// PIDs defines -p and --pid, repeatable and taking lists when many,
// else taking one PID.
func (fs *FlagSet) PIDs(many bool, usage string) *PIDs {
	p := &PIDs{one: !many}
	fs.Var(p, "p", usage)
	fs.Alias("p", "pid")
	return p
}

// List returns the PIDs given, in order.
func (p *PIDs) List() []int { return p.pids }

// One returns the one PID given, or 0.
func (p *PIDs) One() int {
	if len(p.pids) == 0 {
		return 0
	}
	return p.pids[0]
}
