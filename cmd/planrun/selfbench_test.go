package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/load/selfbench"
)

func runSelfbenchCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code = Main(context.Background(), env, append([]string{"selfbench"}, args...))
	return code, out.String(), errb.String()
}

func TestSelfbenchInProcess(t *testing.T) {
	for _, tc := range []struct {
		flag, where string
	}{{"-inprocess", "mock in this process at http://127.0.0.1:"}, {"-unix", "mock in this process on a Unix socket at http://mock.sock"}} {
		args := []string{"-inprocess", "-levels", "1,3", "-ttft", "1ms", "-tpot", "1ms", "-tokens", "4", "-duration", "5ms", "-markdown"}
		code, out, errs := runSelfbenchCmd(t, append(args, tc.flag)...)
		if code != exitOK {
			t.Fatalf("%s: exit %d, stderr:\n%s", tc.flag, code, errs)
		}
		for _, want := range []string{tc.where, "| streams | requests | tok/s |", "\n| 1 | 1 | ", "\n| 3 | 3 | ",
			"client AND mock server (in-process)"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", tc.flag, want, out)
			}
		}
	}
}

func TestSelfbenchFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-levels", "1,x"}, {"-levels", "0"}, {"-protocol", "grpc"}, {"-tokens", "1"}, {"-duration", "0s"}, {"extra"},
	} {
		if code, _, errs := runSelfbenchCmd(t, args...); code != exitUsage || errs == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	if code, _, errs := runSelfbenchCmd(t, "-h"); code != exitOK || !strings.Contains(errs, "-levels") {
		t.Errorf("-h: exit %d, stderr %q", code, errs)
	}
	a, err := parseSelfbench([]string{"-levels", "2, 5", "-tpot", "3ms", "-jitter", "1ms", "-protocol", "ollama", "-unix"}, io.Discard)
	if err != nil || len(a.Cfg.Levels) != 2 || a.Cfg.Levels[1] != 5 || a.Cfg.TPOT != 3*time.Millisecond || a.Cfg.Protocol != "ollama" {
		t.Fatalf("parsed %+v, %v", a, err)
	}
	// The child is told the same schedule.
	a.socket = "/tmp/x.sock"
	child, err := parseSelfbench(mockChildArgs(a)[1:], io.Discard)
	if err != nil || !child.serveMock || child.socket != a.socket || child.Cfg.Jitter != a.Cfg.Jitter || child.Cfg.TPOT != a.Cfg.TPOT || child.Cfg.Tokens != a.Cfg.Tokens || child.Cfg.TTFT != a.Cfg.TTFT {
		t.Fatalf("child parsed %+v, %v", child, err)
	}
}

// TestSelfbenchServeMock runs the child half in process: it prints its URL, serves the
// truth endpoint, and exits when its stdin closes.
func TestSelfbenchServeMock(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	env := &Env{Stdout: outW, Stderr: io.Discard, Stdin: inR, Getenv: func(string) string { return "" }}
	done := make(chan int)
	go func() {
		done <- Main(context.Background(), env, []string{"selfbench", "-serve-mock", "-tokens", "3", "-ttft", "0s", "-tpot", "0s"})
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSpace(line)
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"model":"m","prompt":"[k] x","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	target := selfbench.Remote(url, "")
	sums, err := target.Summaries(context.Background(), true)
	if err != nil || len(sums) != 1 || sums[0].Tokens != 3 || sums[0].Prompt != "[k] x" {
		t.Fatalf("summaries %+v, %v", sums, err)
	}
	inW.Close()
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d", code)
	}
}
