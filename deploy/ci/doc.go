// Package ci holds the test that runs profile-diff.sh, the steps of the
// profile-diff workflow, on two commits: a Go package only so that the
// README's test command runs it and the example cannot rot.
package ci
