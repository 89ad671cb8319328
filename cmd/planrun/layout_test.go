package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mapEntry is one line of docs/development.md's folder map: a folder (or file) path,
// and what the map says of it.
type mapEntry struct {
	path string
	text string
}

// folderMap reads the map under "## How the code is laid out": an indented block whose
// lines name folders in a column (two spaces deeper a level, several on one line
// allowed: "ollama/ openai/ taotoken/"), each followed by its description, which
// continues on lines indented past the names.
func folderMap(t *testing.T, doc string) []mapEntry {
	t.Helper()
	_, after, ok := strings.Cut(doc, "\n## How the code is laid out\n")
	if !ok {
		t.Fatal(`docs/development.md has no "## How the code is laid out"`)
	}
	const block, deepest = 4, 20 // the block's indent; names start left of deepest
	var out []mapEntry
	var parents []string
	inBlock := false
	for _, line := range strings.Split(after, "\n") {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		switch {
		case strings.TrimSpace(line) == "":
			continue
		case indent < block && inBlock:
			return out
		case indent < block:
			continue
		case indent >= deepest:
			if len(out) > 0 {
				out[len(out)-1].text += " " + strings.TrimSpace(line)
			}
			continue
		}
		inBlock = true
		depth := (indent - block) / 2
		names, text, _ := strings.Cut(strings.TrimSpace(line), "  ")
		parents = append(parents[:min(depth, len(parents))], "")
		for name := range strings.FieldsSeq(strings.ReplaceAll(names, ",", " ")) {
			parent := ""
			if depth > 0 {
				parent = parents[depth-1]
			}
			out = append(out, mapEntry{path: parent + name, text: strings.TrimSpace(text)})
			parents[depth] = parent + name
		}
	}
	return out
}

// packageDirs are the module's folders holding Go files (test-only ones included),
// relative to root: not the nested modules (tools/k8s), testdata, or hidden folders.
func packageDirs(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && rel != "." {
				return filepath.SkipDir // a module of its own
			}
			return nil
		}
		if dir := filepath.ToSlash(filepath.Dir(rel)); strings.HasSuffix(p, ".go") && dir != "." && !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// docs/development.md's folder map is the tree: every folder or file it names exists,
// and every folder of Go code is in it, as a line of its own or named in its parent's
// description ("internal/: production helpers: tinymodel, suggest, …").
func TestFolderMapIsTheTree(t *testing.T) {
	const root = "../.."
	doc, err := os.ReadFile(filepath.Join(root, "docs/development.md"))
	if err != nil {
		t.Fatal(err)
	}
	entries := folderMap(t, string(doc))
	if len(entries) < 10 {
		t.Fatalf("the folder map has %d entries: %q", len(entries), entries)
	}
	described := map[string]string{}
	for _, e := range entries {
		described[strings.TrimSuffix(e.path, "/")] = e.text
		if _, err := os.Stat(filepath.Join(root, e.path)); err != nil {
			t.Errorf("docs/development.md's folder map names %s, which is not in the tree", e.path)
		}
	}
	for _, dir := range packageDirs(t, root) {
		if _, ok := described[dir]; ok {
			continue
		}
		parent, base := filepath.Dir(dir), filepath.Base(dir)
		if text, ok := described[parent]; !ok || !regexp.MustCompile(`\b`+regexp.QuoteMeta(base)+`\b`).MatchString(text) {
			t.Errorf("%s/ holds Go code and is not in docs/development.md's folder map (a line of its own, or named in %s/'s)", dir, parent)
		}
	}
}
