package realserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstallFind(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, ".tools", "bin", "tool")
	os.MkdirAll(filepath.Dir(bin), 0o755)
	os.WriteFile(bin, nil, 0o755)
	in := Install{Env: "PLANRUN_REALSERVER_TEST", Path: filepath.Join(".tools", "bin", "tool"), Name: "the tool",
		Label: "tool", Hint: "run scripts/install-tool.sh"}
	for _, tc := range []struct {
		name, env, root, want, wantErr string
	}{
		{"under the root", "", root, bin, ""},
		{"missing under the root", "", t.TempDir(), "", "no tool at "},
		{"named by the variable", bin, "", bin, ""},
		{"the variable names nothing", filepath.Join(root, "nothing"), "", "", "PLANRUN_REALSERVER_TEST=" + filepath.Join(root, "nothing") + ": "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(in.Env, tc.env)
			var got string
			var err error
			if tc.root != "" {
				got, err = in.In(tc.root)
			} else {
				got, err = in.Find()
			}
			if got != tc.want || (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("= %q, %v; want %q, error %q", got, err, tc.want, tc.wantErr)
			}
			if err != nil && tc.root != "" && !strings.Contains(err.Error(), "run scripts/install-tool.sh (or set PLANRUN_REALSERVER_TEST)") {
				t.Fatalf("error %q does not say how to install", err)
			}
		})
	}
}

type fakeServer struct{ stops *int }

func (f fakeServer) Stop() error { *f.stops++; return nil }

// The server starts once, on first use, under a directory of its own that Stop removes;
// a server that never started is not stopped, and one that cannot start fails each test.
func TestShared(t *testing.T) {
	starts, stops := 0, 0
	var dir string
	s := &Shared[fakeServer]{Name: "faketest", Pattern: "planrun-fake-", Start: func(d string) (fakeServer, error) {
		starts, dir = starts+1, d
		return fakeServer{&stops}, nil
	}}
	if err := s.Stop(); err != nil || stops != 0 {
		t.Fatalf("Stop before any start: %v, %d stops", err, stops)
	}
	s.Get(t)
	s.Get(t)
	if starts != 1 || !strings.HasPrefix(filepath.Base(dir), "planrun-fake-") {
		t.Fatalf("%d starts in %q, want one in a planrun-fake- directory", starts, dir)
	}
	if err := s.Stop(); err != nil || stops != 1 {
		t.Fatalf("Stop: %v, %d stops", err, stops)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the server's directory is still there: %v", err)
	}

	failing := &Shared[fakeServer]{Name: "faketest", Pattern: "planrun-fake-", Start: func(string) (fakeServer, error) {
		return fakeServer{}, errors.New("no port")
	}}
	var ft fatalRecorder
	func() {
		defer func() { recover() }()
		failing.Get(&ft)
	}()
	if ft.msg != "faketest: no port" {
		t.Fatalf("a start that fails: %q", ft.msg)
	}
	if err := failing.Stop(); err != nil {
		t.Fatal(err)
	}
}

// fatalRecorder is a testing.TB whose Fatalf records the message and stops the call.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}
