package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/servers/mockserver"
)

// The README's "No server? Try the examples on the mock" runs as it is written:
// `planrun mock-server` with its default flags, then `planrun apply` on each example the
// section names, with no -var of the model (the mock serves any name, and says so in its
// list). Two things differ, neither about the model: the mock streams fast (its TTFT and
// TPOT, not its list), and it listens on a free port, handed to the plans as their url
// variable, whose default is checked to be the mock's default address.
func TestReadmeMockExamplesRun(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## No server? Try the examples on the mock\n")
	if !ok {
		t.Fatal("README has no section \"No server? Try the examples on the mock\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	m := regexp.MustCompile(`(?m)^\s+planrun apply examples/([\w-]+)\.hcl\s+# also (.+)$`).FindStringSubmatch(section)
	if m == nil || !strings.Contains(section, "planrun mock-server &") {
		t.Fatalf("the section no longer reads `planrun mock-server &` then `planrun apply examples/X.hcl # also ...`:\n%s", section)
	}
	names := []string{m[1]}
	for _, n := range strings.Split(m[2], ",") {
		names = append(names, strings.TrimSpace(n))
	}
	if len(names) < 5 {
		t.Fatalf("the section names %d examples: %v", len(names), names)
	}

	args, err := parseMockServer(nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if args.Addr != "127.0.0.1:8000" {
		t.Fatalf("mock-server listens on %s by default", args.Addr)
	}
	cfg := args.Cfg
	cfg.TTFT, cfg.TPOT = time.Millisecond, 100*time.Microsecond
	srv := httptest.NewServer(mockserver.New(cfg))
	defer srv.Close()

	// A copy of examples/ as a fresh clone has it, so the run writes nothing into the repo.
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS("../../examples")); err != nil {
		t.Fatal(err)
	}
	defaultURL := regexp.MustCompile(`variable "url" \{[^}]*default\s*=\s*"http://127\.0\.0\.1:8000/v1"`)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, "examples", name+".hcl")
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("the README names examples/%s.hcl: %v", name, err)
			}
			if !defaultURL.Match(src) {
				t.Fatalf("examples/%s.hcl has no variable \"url\" defaulting to the mock's http://127.0.0.1:8000/v1", name)
			}
			code, out, errs := runCmd(t, "", "apply", "-gpu=false", "-quiet", "-var", "url="+srv.URL+"/v1", path)
			if code != exitOK || !strings.Contains(out, "Apply complete!") || !strings.Contains(out, " 0 failed") {
				t.Fatalf("exit %d\n%s\n%s", code, out, errs)
			}
		})
	}
}
