package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

func runEstimateCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code = Main(context.Background(), env, append([]string{"estimate"}, args...))
	return code, out.String(), errb.String()
}

func TestEstimateCommand(t *testing.T) {
	show, err := os.ReadFile("../../telemetry/serverstats/testdata/ollama-show-qwen2.5-7b.json")
	if err != nil {
		t.Fatal(err)
	}
	ollama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/show" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.Copy(w, bytes.NewReader(show))
	}))
	defer ollama.Close()

	for _, tc := range []struct {
		name        string
		args        []string
		code        int
		out, errOut []string
	}{
		{"flags", []string{"-params", "7.6B", "-quant", "q4_K_M", "-layers", "28", "-kv-heads", "4", "-head-dim", "128", "-context", "8192", "-concurrency", "4"}, exitOK,
			[]string{"weights       4.28 GiB", "kv cache      1.75 GiB", "total         7.03 GiB"}, nil},
		{"from ollama", []string{"-ollama", ollama.URL, "-model", "qwen2.5:7b", "-context", "4096"}, exitOK,
			[]string{"qwen2.5:7b (qwen2, from", "(Q4_K_M)", "kv cache      0.22 GiB", "× 4096 context"}, nil},
		{"json", []string{"-params", "7e9", "-quant", "fp16", "-json"}, exitOK, []string{`"weights_bytes": 14000000000`}, nil},
		{"weights only", []string{"-params", "7B", "-quant", "q8_0"}, exitOK, []string{"note: KV cache not counted"}, nil},
		{"help", []string{"-h"}, exitOK, nil, []string{"Usage: planrun estimate"}},
		{"nothing given", nil, exitUsage, nil, []string{"give -params"}},
		{"unknown quant", []string{"-params", "7B", "-quant", "q9"}, exitUsage, nil, []string{`unknown quantization "q9"`}},
		{"bad params", []string{"-params", "lots", "-quant", "q4_0"}, exitUsage, nil, []string{`parameters "lots"`}},
		{"model without server", []string{"-model", "x"}, exitUsage, nil, []string{"go together"}},
		{"server down", []string{"-ollama", "http://127.0.0.1:1", "-model", "x"}, exitError, nil, []string{"/api/show x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runEstimateCmd(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, errOut)
			}
			for _, w := range tc.out {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.errOut {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}
