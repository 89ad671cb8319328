package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planrun/planrun/telemetry/procmem"
	"github.com/planrun/planrun/telemetry/procmem/exporter"
)

// planrun process-exporter serves, over real TCP, the processes whose command line
// matches and the ones below them, under the group name it was given.
func TestProcessExporterServesAMatchedTree(t *testing.T) {
	marker := "planrun-exporter-test-" + strconv.Itoa(os.Getpid())
	child := exec.Command("sh", "-c", "sleep 60; :", marker)
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // so the sleep ends with it
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-child.Process.Pid, syscall.SIGKILL); child.Wait() }()
	match := regexp.MustCompile(regexp.QuoteMeta(marker))
	for deadline := time.Now().Add(10 * time.Second); len(procmem.Matching(match)) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the shell never started its sleep")
		}
	}

	outR, outW := io.Pipe()
	env := &Env{Stdout: outW, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- Main(ctx, env, []string{"process-exporter", "-listen", "127.0.0.1:0", "-match", regexp.QuoteMeta(marker), "-name", "sleeper"})
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := regexp.MustCompile(`http://\S+/metrics`).FindString(line)
	if url == "" || !strings.Contains(line, `group "sleeper"`) || !strings.Contains(line, "now 2,") {
		t.Fatalf("start line: %q", line)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	groups, err := exporter.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	g := groups["sleeper"]
	if len(groups) != 1 || g.Processes != 2 || g.RSS == 0 {
		t.Errorf("scrape: %+v\n%s", groups, body)
	}
	stop()
	go io.Copy(io.Discard, outR)
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d", code)
	}
}
