package kube

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
)

// What the agent's run directory holds arrives byte for byte in the job's directory: a
// file that grows in pieces, one rewritten shorter (as the manifest is), and lines of the
// agent's own output that go to the log file instead. Reading the same log again (a
// broken stream opened anew) writes the same files and no line twice.
func TestFramesCarryTheRunDirectory(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	var stream bytes.Buffer
	s := NewSender(src, &stream)
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	appendTo := func(name, data string) {
		f, err := os.OpenFile(filepath.Join(src, name), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(data)
		f.Close()
	}
	big := strings.Repeat("0123456789abcdef", 3000) + "\n" // over several frames
	appendTo(ledger.ResultsFile, "header\nrow1,")
	s.Flush()
	stream.WriteString("a line of planrun's own\n")
	appendTo(ledger.ResultsFile, "half\n")
	appendTo(ledger.RequestsFile, big)
	write(ledger.ManifestFile, `{"cells": ["a", "b", "c"]}`)
	s.Flush()
	// The manifest is rewritten shorter (a new file renamed over it).
	tmp := filepath.Join(src, "m.tmp")
	os.WriteFile(tmp, []byte(`{"cells": []}`), 0o644)
	os.Rename(tmp, filepath.Join(src, ledger.ManifestFile))
	s.End(4)

	for _, line := range strings.Split(stream.String(), "\n") {
		if len(line) >= 16<<10 {
			t.Fatalf("a frame of %d bytes: containerd would split it", len(line))
		}
	}
	var log bytes.Buffer
	r := newReceiver(dst, &log)
	defer r.close()
	started := false
	for range 2 { // the second time: the same log read again from its start
		r.skip = r.lines
		if err := r.read(bytes.NewReader(stream.Bytes()), func() { started = true }); err != nil {
			t.Fatal(err)
		}
	}
	if !started || !r.ended || r.code != 4 {
		t.Errorf("start %v, end %v, code %d", started, r.ended, r.code)
	}
	for name, want := range map[string]string{
		ledger.ResultsFile:  "header\nrow1,half\n",
		ledger.RequestsFile: big,
		ledger.ManifestFile: `{"cells": []}`,
	} {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %d bytes, want %d (%v)", name, len(got), len(want), err)
		}
	}
	if log.String() != "a line of planrun's own\n" {
		t.Errorf("the log file holds %q", log.String())
	}
}

// A frame may only name the files apply merges: a log line cannot write elsewhere.
func TestFramesNameOnlyMergedFiles(t *testing.T) {
	r := newReceiver(t.TempDir(), &bytes.Buffer{})
	defer r.close()
	err := r.read(strings.NewReader(framePrefix+"file ../../etc/passwd 0 aGk=\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "does not merge") {
		t.Errorf("err = %v", err)
	}
}
