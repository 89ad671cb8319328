package slurm

import (
	"testing"
	"time"
)

// A job's processes know their step from the environment Slurm gives them; outside a
// job there is none.
func TestStepOf(t *testing.T) {
	for _, tc := range []struct {
		job, step, want string
	}{
		{"41", "", "41.batch"},
		{"41", "0", "41.0"},
		{"", "", ""},
		{"", "0", ""},
	} {
		getenv := func(k string) string {
			return map[string]string{"SLURM_JOB_ID": tc.job, "SLURM_STEP_ID": tc.step}[k]
		}
		if got := stepOf(getenv); got != tc.want {
			t.Errorf("job %q step %q: %q, want %q", tc.job, tc.step, got, tc.want)
		}
	}
	if j := inJob(func(string) string { return "" }); j != nil {
		t.Errorf("outside a job: %v", j)
	}
}

// The memory a job's rows carry says it is the whole job's, which step and since when.
func TestJobMemorySource(t *testing.T) {
	start := time.Date(2026, 12, 6, 5, 20, 46, 0, time.UTC)
	for _, tc := range []struct {
		j    job
		want string
	}{
		{job{step: "41.batch", start: start}, "sstat MaxRSS of job step 41.batch: the whole job (planrun's client and the servers it started), peak since the job started at 2026-12-06T05:20:46Z"},
		{job{step: "41.0"}, "sstat MaxRSS of job step 41.0: the whole job (planrun's client and the servers it started), peak since the job started"},
	} {
		if got := tc.j.MemorySource(); got != tc.want {
			t.Errorf("%q,\nwant %q", got, tc.want)
		}
	}
}
