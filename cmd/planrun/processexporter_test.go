package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"strings"
	"testing"
)

func TestProcessExporterFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{nil, "-match is required"},
		{[]string{"-match", "ollama("}, "-match: error parsing regexp"},
		{[]string{"-match", "x", "extra"}, `unexpected argument "extra"`},
	} {
		var errb bytes.Buffer
		env := &Env{Stdout: io.Discard, Stderr: &errb, Getenv: func(string) string { return "" }}
		if code := Main(context.Background(), env, append([]string{"process-exporter"}, tc.args...)); code != exitUsage || !strings.Contains(errb.String(), tc.err) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errb.String(), exitUsage, tc.err)
		}
	}
	a, err := parseProcessExporter([]string{"-match", "ollama serve"}, io.Discard)
	if err != nil || a.Group.Name != "ollama serve" || a.Listen != ":9256" {
		t.Errorf("defaults: %+v %v", a, err)
	}
}

func TestReachableAddr(t *testing.T) {
	host, _ := os.Hostname()
	for addr, want := range map[net.Addr]string{
		&net.TCPAddr{IP: net.IPv6unspecified, Port: 9256}:    net.JoinHostPort(host, "9256"),
		&net.TCPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 9256}: "127.0.0.2:9256",
	} {
		if got := reachableAddr(addr); got != want {
			t.Errorf("reachableAddr(%v) = %q, want %q", addr, got, want)
		}
	}
}
