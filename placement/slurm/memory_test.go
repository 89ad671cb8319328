package slurm

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/shell"
	"github.com/planrun/planrun/internal/testkit/proctest"
	"github.com/planrun/planrun/internal/testkit/slurmtest"
)

func TestParseSstat(t *testing.T) {
	// sstat -n -P --noconvert, as Slurm 22.05 prints it (bytes), and without
	// --noconvert honoured (a suffix).
	m, err := parseSstat("41.batch", "41.batch|126709760|123736064|1\n")
	if err != nil || m != (StepMemory{Step: "41.batch", MaxRSS: 126709760, AveRSS: 123736064, Tasks: 1}) {
		t.Errorf("bytes: %+v %v", m, err)
	}
	m, err = parseSstat("41.batch", "41.batch|123740K|1.5M|1\n")
	if err != nil || m.MaxRSS != 123740*1024 || m.AveRSS != 1.5*1024*1024 {
		t.Errorf("suffixes: %+v %v", m, err)
	}
	if _, err := parseSstat("41.batch", ""); err == nil || !strings.Contains(err.Error(), "no line for step 41.batch") {
		t.Errorf("no line: %v", err)
	}
	if _, err := parseSstat("41.batch", "41.batch|lots|1|1\n"); err == nil {
		t.Error("a malformed MaxRSS was read")
	}
}

// On the test cluster (JobAcctGatherType=jobacct_gather/linux), sstat reads a running
// batch step that holds a known amount: the allocator child below the batch script.
// MaxRSS covers the whole step (bash, the allocator's Go runtime, its allocation), so it
// lies between the allocation and the allocation plus 64 MiB.
func TestClusterStepMemory(t *testing.T) {
	slurmtest.Require(t)
	slurmtest.RequireAccounting(t)
	ctx := watchContext(t)
	job := stubJob(t, "small", `(echo go; sleep 60) | PLANRUN_PROCTEST_ALLOCATOR=1 `+shell.Quote(os.Args[0])+` -test.run='^$'`)
	id, err := submit(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel(context.Background(), []string{id})
	var m StepMemory
	for deadline := time.Now().Add(60 * time.Second); m.MaxRSS < proctest.AllocBytes; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("sstat never saw the allocation: %+v, %v", m, err)
		}
		m, err = ReadStepMemory(ctx, id+".batch")
	}
	t.Logf("step %s: MaxRSS %.1f MiB, AveRSS %.1f MiB, %d task(s), for %d MiB allocated",
		m.Step, float64(m.MaxRSS)/(1<<20), float64(m.AveRSS)/(1<<20), m.Tasks, proctest.AllocBytes>>20)
	if over := float64(m.MaxRSS) - proctest.AllocBytes; over > 64<<20 || m.Tasks != 1 || math.Abs(float64(m.AveRSS)-float64(m.MaxRSS)) > 16<<20 {
		t.Errorf("step memory %+v: want MaxRSS within 64 MiB above the allocation, one task, AveRSS near MaxRSS (the memory is held)", m)
	}
	start, err := JobStart(ctx, id)
	if err != nil || time.Since(start) > 2*time.Minute || time.Since(start) < 0 {
		t.Errorf("JobStart = %v, %v", start, err)
	}
	if _, err := ReadStepMemory(ctx, "999999.batch"); err == nil {
		t.Error("sstat of a job that does not exist gave no error")
	}
}
