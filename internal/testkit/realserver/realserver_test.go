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

// A missing install skips the test naming the install command, or fails it when
// PLANRUN_INTEGRATION is set; a variable naming nothing fails it either way.
func TestRequire(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tool")
	os.WriteFile(bin, nil, 0o755)
	in := Install{Env: "PLANRUN_REALSERVER_TEST", Path: filepath.Join(".tools", "bin", "planrun-no-such-tool"),
		Name: "the tool", Label: "tool", Hint: "run scripts/install-tool.sh"}
	for _, tc := range []struct {
		name, integration, env string
		want, end, msg         string
	}{
		{"installed", "", bin, bin, "", ""},
		{"missing", "", "", "", "skip", "run scripts/install-tool.sh (or set PLANRUN_REALSERVER_TEST) (PLANRUN_INTEGRATION is unset"},
		{"missing under PLANRUN_INTEGRATION", "1", "", "", "fatal", "run scripts/install-tool.sh (or set PLANRUN_REALSERVER_TEST) (PLANRUN_INTEGRATION is set"},
		{"the variable names nothing", "", bin + ".gone", "", "fatal", "PLANRUN_REALSERVER_TEST=" + bin + ".gone: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(IntegrationEnv, tc.integration)
			t.Setenv(in.Env, tc.env)
			var r endRecorder
			got := r.run(func() string { return Require(&r, in) })
			if got != tc.want || r.end != tc.end || !strings.Contains(r.msg, tc.msg) {
				t.Fatalf("= %q, %s %q; want %q, %s containing %q", got, r.end, r.msg, tc.want, tc.end, tc.msg)
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
	bin := filepath.Join(t.TempDir(), "tool")
	os.WriteFile(bin, nil, 0o755)
	t.Setenv("PLANRUN_REALSERVER_TEST", bin)
	installed := Install{Env: "PLANRUN_REALSERVER_TEST", Path: filepath.Join(".tools", "bin", "planrun-no-such-tool")}
	s := &Shared[fakeServer]{Name: "faketest", Pattern: "planrun-fake-", Install: installed, Start: func(d string) (fakeServer, error) {
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

	failing := &Shared[fakeServer]{Name: "faketest", Pattern: "planrun-fake-", Install: installed, Start: func(string) (fakeServer, error) {
		return fakeServer{}, errors.New("no port")
	}}
	var ft endRecorder
	ft.run(func() string { failing.Get(&ft); return "" })
	if ft.end != "fatal" || ft.msg != "faketest: no port" {
		t.Fatalf("a start that fails: %s %q", ft.end, ft.msg)
	}
	if err := failing.Stop(); err != nil {
		t.Fatal(err)
	}

	// Without the install, Get ends the test before anything starts.
	t.Setenv("PLANRUN_REALSERVER_TEST", "")
	t.Setenv(IntegrationEnv, "")
	starts = 0
	missing := &Shared[fakeServer]{Name: "faketest", Pattern: "planrun-fake-", Install: installed, Start: func(string) (fakeServer, error) {
		starts++
		return fakeServer{&stops}, nil
	}}
	var st endRecorder
	st.run(func() string { missing.Get(&st); return "" })
	if st.end != "skip" || starts != 0 {
		t.Fatalf("Get without the install: %s %q, %d starts", st.end, st.msg, starts)
	}
	if err := missing.Stop(); err != nil {
		t.Fatal(err)
	}
}

// endRecorder is a testing.TB whose Skip, Fatal and Fatalf record how the test would
// end and stop the call, as runtime.Goexit stops a test.
type endRecorder struct {
	testing.TB
	end, msg string
}

// run calls f, returning its result, or "" once f has ended the test.
func (r *endRecorder) run(f func() string) (got string) {
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
	}()
	return f()
}

func (r *endRecorder) Helper() {}

func (r *endRecorder) Skip(args ...any) { r.stop("skip", fmt.Sprint(args...)) }

func (r *endRecorder) Fatal(args ...any) { r.stop("fatal", fmt.Sprint(args...)) }

func (r *endRecorder) Fatalf(format string, args ...any) {
	r.stop("fatal", fmt.Sprintf(format, args...))
}

func (r *endRecorder) stop(end, msg string) {
	r.end, r.msg = end, msg
	panic(r)
}
