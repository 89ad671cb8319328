package main

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/ledger"
)

// exitCodeMarkdown is the README's exit code table: every code, in apply's order, with its
// meaning to apply and to compare.
func exitCodeMarkdown() string {
	var b strings.Builder
	b.WriteString("| code | apply | compare |\n|---|---|---|\n")
	for i, c := range exitCodes {
		fmt.Fprintf(&b, "| `%d` | %s | %s |\n", c.code, mdtable.Dash(exitCodeMeaning("apply", i)),
			mdtable.Dash(strings.ReplaceAll(exitCodeMeaning("compare", i), "\n", " ")))
	}
	return b.String()
}

// The README's exit code table is exitCodes, as exitCodeMarkdown writes it.
func TestExitCodesInReadme(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := exitCodeMarkdown()
	if !strings.Contains(string(readme), "\n## Exit codes\n") || !strings.Contains(string(readme), want) {
		t.Errorf("README.md's \"## Exit codes\" should hold the table of cmd/planrun/main.go's exitCodes:\n%s", want)
	}
	if os.Getenv("PLANRUN_PRINT_EXIT_CODES") != "" {
		fmt.Print(want)
	}
}

// The commands in the README's Commands table are the registered commands.
func TestCommandsInReadme(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var inReadme []string
	for _, m := range regexp.MustCompile("(?m)^\\| `planrun ([a-z-]+)").FindAllStringSubmatch(string(readme), -1) {
		inReadme = append(inReadme, m[1])
	}
	slices.Sort(inReadme)
	var registered []string // the commands usage lists: a hidden one (agent) apply starts itself
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		if !commands[name].hidden {
			registered = append(registered, name)
		}
	}
	if !slices.Equal(inReadme, registered) {
		t.Errorf("README's Commands table lists %v; the registered commands are %v", inReadme, registered)
	}
}

// docs/commands.md's CSV columns table names every column of the ledger's header, and no
// column the header lacks. `{a,b}` in a name is either, and `…` any run of the figures'
// statistics (p50, p90, …).
func TestCSVColumnsInDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## The CSV columns\n")
	if section, _, _ = strings.Cut(section, "\n## "); !ok {
		t.Fatal(`docs/commands.md has no "## The CSV columns"`)
	}
	header := ledger.Header()
	var patterns []*regexp.Regexp
	for _, cell := range regexp.MustCompile("(?m)^\\| ([^|]*)\\|").FindAllStringSubmatch(section, -1) {
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cell[1], -1) {
			name := m[1]
			if !strings.ContainsAny(name, "{…") && !slices.Contains(header, name) {
				t.Errorf("docs/commands.md documents a column %q the ledger does not have", name)
			}
			expr := regexp.QuoteMeta(name)
			expr = regexp.MustCompile(`\\\{([^}]*)\\\}`).ReplaceAllStringFunc(expr, func(s string) string {
				return "(" + strings.ReplaceAll(s[2:len(s)-2], ",", "|") + ")"
			})
			patterns = append(patterns, regexp.MustCompile("^"+strings.ReplaceAll(expr, "…", "[a-z0-9]+")+"$"))
		}
	}
	for _, col := range header {
		if !slices.ContainsFunc(patterns, func(p *regexp.Regexp) bool { return p.MatchString(col) }) {
			t.Errorf("column %s is not in docs/commands.md's CSV columns table", col)
		}
	}
}
