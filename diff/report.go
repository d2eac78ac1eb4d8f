package diff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Format is a report's rendering.
type Format string

// The report formats.
const (
	Text     Format = "text"     // a table for a terminal or a CI log
	Markdown Format = "markdown" // a pull-request comment or $GITHUB_STEP_SUMMARY
	JSON     Format = "json"     // for tools
)

// ParseFormat checks a --format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Text, Markdown, JSON:
		return f, nil
	}
	return "", fmt.Errorf("--format must be text, markdown or json, not %q", s)
}

// Write renders the report.
func (r *Report) Write(w io.Writer, f Format) error {
	var err error
	switch f {
	case JSON:
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		err = e.Encode(r)
	case Markdown:
		err = r.writeMarkdown(w)
	default:
		err = r.writeText(w)
	}
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	return nil
}

// rows is the functions a table lists: the regressions and then the
// largest changes, up to the report's top.
func (r *Report) rows() []Function {
	n := len(r.Functions)
	if r.top >= 0 && r.top < n {
		n = max(r.top, len(r.Regressions))
		n = min(n, len(r.Functions))
	}
	return r.Functions[:n]
}

// Verdict is the report's one-line conclusion.
func (r *Report) Verdict() string {
	if len(r.Regressions) == 0 {
		return "no significant regression"
	}
	s := "regression"
	if len(r.Regressions) > 1 {
		s = strconv.Itoa(len(r.Regressions)) + " regressions"
	}
	return s + ": " + strings.Join(r.Regressions, ", ")
}

func (r *Report) header() string {
	side := func(s Side) string {
		var total int64
		for _, n := range s.Samples {
			total += n
		}
		return fmt.Sprintf("%s (%s samples)", plural(len(s.Profiles), "profile"), strconv.FormatInt(total, 10))
	}
	kind := ""
	if r.Kind != "" {
		kind = ", " + r.Kind
	}
	h := fmt.Sprintf("base %s, new %s%s; fail on %s", side(r.Base), side(r.New), kind, strings.Join(r.FailOn, ","))
	if r.FixedWork {
		h += " (a fixed amount of work a profile)"
	}
	if n := len(r.Base.Skipped) + len(r.New.Skipped); n > 0 {
		h += fmt.Sprintf("; skipped %s that are not profiles: %s", plural(n, "file"), strings.Join(append(append([]string(nil), r.Base.Skipped...), r.New.Skipped...), ", "))
	}
	return h
}

func (r *Report) writeText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "macprof diff: %s\n%s\n\n", r.Verdict(), r.header())
	rows := r.rows()
	wv := len("verdict")
	for _, f := range rows {
		wv = max(wv, len(verdict(f)))
	}
	// Numbers right-aligned by the tabwriter; verdict and name, the
	// last cell, left-aligned by padding.
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	timed := r.timeJudged()
	timeHead := ""
	if timed {
		timeHead = "time Δ\tnoise\t"
	}
	fmt.Fprintf(tw, "flat base\tflat new\tflat Δ\tnoise\tmde\tcum base\tcum new\tcum Δ\tnoise\tmde\t%s  %-*s  function\n", timeHead, wv, "verdict")
	for _, f := range rows {
		timeCells := ""
		if timed {
			timeCells = timeCell(f.Time, "\t±", "-\t-") + "\t"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t±%s\t%s\t%s\t%s\t%s\t±%s\t%s\t%s  %-*s  %s\n",
			pct(f.Flat.Base), pct(f.Flat.New), pp(f.Flat.Delta), num(f.Flat.Noise), num(f.Flat.MDE),
			pct(f.Cum.Base), pct(f.Cum.New), pp(f.Cum.Delta), num(f.Cum.Noise), num(f.Cum.MDE), timeCells, wv, verdict(f), f.Name)
	}
	tw.Flush()
	if s := r.loadFollowingLine(); s != "" {
		fmt.Fprintf(bw, "\n%s\n", s)
	}
	fmt.Fprintf(bw, "\n%s\n", r.totalLine())
	fmt.Fprintf(bw, "Test: %s; dispersion %s; run spread %s; alpha %g over %s.\n", r.Method, r.dispersion(), r.runSpread(), r.Alpha, plural(r.Tests, "test"))
	return bw.Flush()
}

// loadFollowingLine lists the functions set apart, "" when none was.
func (r *Report) loadFollowingLine() string {
	if len(r.LoadFollowing) == 0 {
		return ""
	}
	var parts []string
	for _, a := range r.LoadFollowing {
		parts = append(parts, fmt.Sprintf("%s %s -> %s (%s)", a.Name, pct(a.Base), pct(a.New), pp(a.Delta)))
	}
	return "Set apart, as their share follows the machine's load (not judged; percent of all samples; the shares above leave them out): " +
		strings.Join(parts, ", ") + "."
}

func (r *Report) totalLine() string {
	return fmt.Sprintf("Total (mean per profile): %s (noise ±%s%%, judged only with a total threshold).", signed(r.Total.Delta, "%"), num(r.Total.Noise))
}

func (r *Report) writeMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	mark := "✅"
	if len(r.Regressions) > 0 {
		mark = "❌"
	}
	fmt.Fprintf(bw, "### %s macprof diff: %s\n\n%s\n\n", mark, mdEscape(r.Verdict()), mdEscape(r.header()))
	timed := r.timeJudged()
	timeHead, timeAlign := "", ""
	if timed {
		timeHead, timeAlign = " own time Δ |", " ---: |"
	}
	fmt.Fprintf(bw, "| function | flat base | flat new | flat Δ | flat mde | cum base | cum new | cum Δ | cum mde |%s verdict |\n", timeHead)
	fmt.Fprintf(bw, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |%s --- |\n", timeAlign)
	for _, f := range r.rows() {
		timeCells := ""
		if timed {
			timeCells = " " + timeCell(f.Time, " ±", "-") + " |"
		}
		fmt.Fprintf(bw, "| `%s` | %s | %s | %s ±%s | %s | %s | %s | %s ±%s | %s |%s %s |\n", strings.ReplaceAll(f.Name, "`", "'"),
			pct(f.Flat.Base), pct(f.Flat.New), pp(f.Flat.Delta), num(f.Flat.Noise), num(f.Flat.MDE),
			pct(f.Cum.Base), pct(f.Cum.New), pp(f.Cum.Delta), num(f.Cum.Noise), num(f.Cum.MDE), timeCells, mdEscape(verdict(f)))
	}
	if s := r.loadFollowingLine(); s != "" {
		fmt.Fprintf(bw, "\n%s\n", mdEscape(s))
	}
	fmt.Fprintf(bw, "\n%s\n\n<details><summary>How this is decided</summary>\n\n", r.totalLine())
	fmt.Fprintf(bw, "Shares are of each side's total samples (without the load-following functions set apart); Δ is in percentage points; ± is the change a rise must exceed to be beyond noise; mde is the smallest rise this data would have found 80%% of the time. ")
	fmt.Fprintf(bw, "Test: %s; dispersion %s; run spread %s; alpha %g over %s. A function fails when a rise is significant and reaches a threshold.\n\n", r.Method, r.dispersion(), r.runSpread(), r.Alpha, plural(r.Tests, "test"))
	fmt.Fprintf(bw, "Base: %s\n\nNew: %s\n\n</details>\n", mdEscape(strings.Join(r.Base.Profiles, ", ")), mdEscape(strings.Join(r.New.Profiles, ", ")))
	return bw.Flush()
}

// runSpread states the run spread used and where it came from.
func (r *Report) runSpread() string {
	if r.RunSpreadDF > 0 {
		return fmt.Sprintf("%.3f (the prior with the spread measured on %d degrees of freedom)", r.RunSpread, r.RunSpreadDF)
	}
	return fmt.Sprintf("%.3f (assumed)", r.RunSpread)
}

// dispersion states the dispersion used and where it came from.
func (r *Report) dispersion() string {
	if r.DispersionDF > 0 {
		return fmt.Sprintf("%.2f (the prior with the spread measured on %d degrees of freedom)", r.Dispersion, r.DispersionDF)
	}
	return fmt.Sprintf("%.2f (assumed)", r.Dispersion)
}

func verdict(f Function) string {
	switch {
	case len(f.Failed) > 0:
		return "REGRESSION (" + strings.Join(f.Failed, ",") + ")"
	case f.Flat.Significant || f.Cum.Significant:
		return "slower, below threshold"
	case f.Flat.Delta <= -f.Flat.Noise && f.Flat.Noise > 0, f.Cum.Delta <= -f.Cum.Noise && f.Cum.Noise > 0:
		return "faster"
	}
	return "~"
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;").Replace(s)
}

// timeJudged reports whether the report judged functions' own time (a
// time threshold), so that the tables show the change it judged.
func (r *Report) timeJudged() bool {
	for _, f := range r.Functions {
		if f.Time != nil {
			return true
		}
	}
	return false
}

// timeCell prints a function's own-time change and its noise, joined by
// sep, or none where the function has no own time.
func timeCell(c *Change, sep, none string) string {
	if c == nil || c.Relative == nil {
		return none
	}
	return signed(c.Delta, "%") + sep + num(c.Noise) + "%"
}

func pct(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "%" }

func pp(v float64) string { return signed(v, "pp") }

func signed(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	if v >= 0 {
		s = "+" + s
	}
	return s + unit
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func plural(n int, unit string) string {
	s := strconv.Itoa(n) + " " + unit
	if n != 1 {
		s += "s"
	}
	return s
}
