package slurm

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/shell"
	"github.com/planrun/planrun/internal/testkit/proctest"
	"github.com/planrun/planrun/internal/testkit/slurmtest"
)

func TestMain(m *testing.M) {
	if proctest.AllocatorMain() { // the batch step of TestClusterStepMemory
		return
	}
	os.Exit(slurmtest.Main(m))
}

// stubJob is a job on the test cluster whose "planrun" is a shell script: it records its
// arguments in args.txt, then runs body.
func stubJob(t testing.TB, partition, body string) JobSpec {
	t.Helper()
	dir := t.TempDir()
	stub := filepath.Join(dir, "planrun-stub")
	src := "#!/bin/bash\nprintf '%s\\n' \"$@\" > " + shell.Quote(dir) + "/args.txt\n" + body + "\n"
	if err := os.WriteFile(stub, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	return JobSpec{
		Name: partition, Hardware: partition, PlanName: "test", PlanPath: "/plans/test.hcl",
		Settings: Settings{Partition: partition, Time: "5"},
		CellIDs:  []string{"m/a/-/ollama.o/" + partition + "/w"}, Vars: []string{"k=v w"},
		Dir: filepath.Join(dir, "run", "slurm", partition), Planrun: stub,
	}
}

func watchContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A tiny job on each partition runs the script's command with the contract's arguments,
// proves the run directory shared, and moves through the states to COMPLETED on this
// node.
func TestClusterSubmitEachPartition(t *testing.T) {
	slurmtest.Require(t)
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	for _, part := range slurmtest.Partitions {
		t.Run(part, func(t *testing.T) {
			ctx := watchContext(t)
			job := stubJob(t, part, "echo measured; sleep 1")
			id, err := submit(ctx, job)
			if err != nil {
				t.Fatal(err)
			}
			node, err := waitShared(ctx, job, id, 30*time.Second)
			if err != nil || node != host {
				t.Fatalf("WaitShared = %q, %v; want node %q", node, err, host)
			}
			var lines []string
			final := Watch(ctx, map[string]string{id: part}, 200*time.Millisecond, func(name string, st status, err error) {
				if err != nil {
					t.Errorf("watch: %v", err)
				}
				lines = append(lines, st.Batch().Line(name))
			})
			if st := final[id]; st.State != stateCompleted || st.Node != host || st.ExitCode != "0:0" {
				t.Fatalf("final %+v; lines %q", st, lines)
			}
			// The marker is written before the command's second of sleep: Watch sees it run.
			if want := fmt.Sprintf("job %s %s: RUNNING on %s", id, part, host); lines[0] != want {
				t.Errorf("first line %q, want %q (all: %q)", lines[0], want, lines)
			}
			if want := fmt.Sprintf("job %s %s: COMPLETED on %s", id, part, host); lines[len(lines)-1] != want {
				t.Errorf("last line %q, want %q (all: %q)", lines[len(lines)-1], want, lines)
			}
			args, _ := os.ReadFile(filepath.Join(filepath.Dir(job.Planrun), "args.txt"))
			wantArgs := strings.Join([]string{"apply", "-quiet", "-run-dir", job.Dir, "-only", job.CellIDs[0], "-var", "k=v w", job.PlanPath}, "\n") + "\n"
			if string(args) != wantArgs {
				t.Errorf("planrun ran with\n%s\nwant\n%s", args, wantArgs)
			}
			if log, _ := os.ReadFile(job.LogPath(id)); string(log) != "measured\n" {
				t.Errorf("job log %q", log)
			}
			// Once the controller forgets the job, the completion log still answers.
			if out, err := run(ctx, "sacct", "-c", "-n", "-P", "-j", id, "-o", "jobid,state"); err != nil || !strings.Contains(out, id+"|COMPLETED") {
				t.Errorf("sacct -c: %q, %v", out, err)
			}
		})
	}
}

// A running job cancelled ends CANCELLED and is gone from squeue when Cancel returns.
func TestClusterCancelRunning(t *testing.T) {
	slurmtest.Require(t)
	ctx := watchContext(t)
	job := stubJob(t, "small", "sleep 300")
	id, err := submit(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel(context.Background(), []string{id})
	if _, err := waitShared(ctx, job, id, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if st, err := jobState(ctx, id); err != nil || st.State != stateRunning {
		t.Fatalf("before cancel: %+v, %v", st, err)
	}
	if err := cancel(ctx, []string{id}); err != nil {
		t.Fatal(err)
	}
	if out, _ := run(ctx, "squeue", "-h", "-o", "%i", "-j", id); strings.TrimSpace(out) != "" {
		t.Errorf("squeue still lists %s: %q", id, out)
	}
	if st, err := jobState(ctx, id); err != nil || st.State != stateCancelled {
		t.Errorf("after cancel: %+v, %v", st, err)
	}
}

// A partition the cluster lacks fails the submission with sbatch's own words.
func TestClusterMissingPartition(t *testing.T) {
	slurmtest.Require(t)
	job := stubJob(t, "nosuch", "true")
	_, err := submit(watchContext(t), job)
	if err == nil || !strings.Contains(err.Error(), "Invalid partition name specified") || !strings.Contains(err.Error(), `hardware "nosuch"`) {
		t.Fatalf("err = %v", err)
	}
}

// An API key in the submitter's environment reaches the job, and is written neither into
// the batch script nor into the job's log.
func TestClusterAPIKeyReachesJobOnlyByEnvironment(t *testing.T) {
	slurmtest.Require(t)
	const key = "sk-planrun-test-4f9c2e71d0"
	t.Setenv("PLANRUN_TEST_API_KEY", key)
	ctx := watchContext(t)
	job := stubJob(t, "large", `printf %s "$PLANRUN_TEST_API_KEY" | sha256sum | cut -d' ' -f1 > "$(dirname "$0")/key.sha256"; env | grep -c PLANRUN_TEST_API_KEY`)
	id, err := submit(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	final := Watch(ctx, map[string]string{id: "large"}, 200*time.Millisecond, func(string, status, error) {})
	if final[id].State != stateCompleted {
		t.Fatalf("job %+v", final[id])
	}
	seen, _ := os.ReadFile(filepath.Join(filepath.Dir(job.Planrun), "key.sha256"))
	if want := fmt.Sprintf("%x\n", sha256.Sum256([]byte(key))); string(seen) != want {
		t.Errorf("the job saw a key hashing to %q, want %q", seen, want)
	}
	for _, f := range []string{job.ScriptPath(), job.LogPath(id)} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), key) {
			t.Errorf("%s holds the API key:\n%s", f, b)
		}
	}
}

// A node that cannot write the run directory fails the job, and WaitShared says which
// directory and where the log is.
func TestClusterRunDirNotWritable(t *testing.T) {
	slurmtest.Require(t)
	ctx := watchContext(t)
	job := stubJob(t, "small", "true")
	// The marker's path taken by a directory: the script's write fails as on a node
	// that does not share (or may not write) the run directory.
	if err := os.MkdirAll(filepath.Join(job.Dir, markerFile), 0o755); err != nil {
		t.Fatal(err)
	}
	id, err := submit(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	_, err = waitShared(ctx, job, id, 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), "the run directory "+job.Dir) || !strings.Contains(err.Error(), job.LogPath(id)) {
		t.Fatalf("err = %v", err)
	}
	if log, _ := os.ReadFile(job.LogPath(id)); !strings.Contains(string(log), "is not writable on") {
		t.Errorf("job log does not say why: %q", log)
	}
}

// BenchmarkClusterJobOverhead measures what a Slurm placement adds around a cell on the
// test cluster, with a command that ends at once: submission to the script running on the
// node (its marker seen), and from there to Slurm reporting the job ended.
//
//	go test -run - -bench ClusterJobOverhead -benchtime 5x ./placement/slurm
func BenchmarkClusterJobOverhead(b *testing.B) {
	slurmtest.Require(b)
	var toStart, toDone time.Duration
	ctx := context.Background()
	for b.Loop() {
		job := stubJob(b, "small", "true")
		start := time.Now()
		id, err := submit(ctx, job)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := waitShared(ctx, job, id, time.Minute); err != nil {
			b.Fatal(err)
		}
		running := time.Now()
		toStart += running.Sub(start)
		if st := Watch(ctx, map[string]string{id: "bench"}, 50*time.Millisecond, func(string, status, error) {}); st[id].State != stateCompleted {
			b.Fatalf("job %s: %+v", id, st[id])
		}
		toDone += time.Since(running)
	}
	b.ReportMetric(toStart.Seconds()/float64(b.N), "s-submit-to-start/op")
	b.ReportMetric(toDone.Seconds()/float64(b.N), "s-start-to-ended/op")
}

// Watch (the cluster tests' own; apply follows its jobs itself) polls the jobs (id → name) every interval and calls report with each job's
// status whenever it changes, until every job has ended or ctx ends. It returns the last
// status of each job. A failed query is reported as the job's error and retried at the
// next tick: the controller may be briefly busy.
func Watch(ctx context.Context, jobs map[string]string, every time.Duration, report func(name string, st status, err error)) map[string]status {
	last := make(map[string]status, len(jobs))
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		running := 0
		for id, name := range jobs {
			if prev, ok := last[id]; ok && prev.State.Terminal() {
				continue
			}
			st, err := jobState(ctx, id)
			if err != nil {
				if ctx.Err() != nil {
					return last
				}
				report(name, status{ID: id}, err)
				running++
				continue
			}
			if prev, ok := last[id]; !ok || prev != st {
				report(name, st, nil)
			}
			last[id] = st
			if !st.State.Terminal() {
				running++
			}
		}
		if running == 0 {
			return last
		}
		select {
		case <-ctx.Done():
			return last
		case <-tick.C:
		}
	}
}
