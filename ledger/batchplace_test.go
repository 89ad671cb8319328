package ledger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A ledger written before the batch columns (testdata/ledger-before-batch-columns.csv,
// written by the code of that time: slurm_job, slurm_node, slurm_state and k8s_job,
// k8s_pod, k8s_node, k8s_state) reads back into the one batch set, each row's scheduler
// named by the set it filled; opened for appending, it is upgraded in place.
func TestLedgerBeforeBatchColumnsReadsBack(t *testing.T) {
	const golden = "testdata/ledger-before-batch-columns.csv"
	want := []BatchPlace{
		{},
		{Scheduler: "slurm", Job: "41", Node: "node1", State: "COMPLETED"},
		{Scheduler: "kubernetes", Job: "bench/planrun-kube-1-abcd", Node: "kind-worker", Pod: "planrun-kube-1-abcd-0-xyz12", State: "COMPLETE"},
	}
	check := func(what string, rows []Row, err error) {
		t.Helper()
		if err != nil || len(rows) != len(want) {
			t.Fatalf("%s: %d rows, %v", what, len(rows), err)
		}
		for i, r := range rows {
			if r.Batch != want[i] {
				t.Errorf("%s: row %d (%s): %+v, want %+v", what, i, r.CellID, r.Batch, want[i])
			}
			if r.TTFT.P99 != 0.95 || r.RunID != "20261201-100000-aaaa" {
				t.Errorf("%s: row %d lost its other columns: %+v", what, i, r)
			}
		}
	}
	rows, err := ReadLedger(golden)
	check("read", rows, err)

	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "results.csv")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatalf("the earlier ledger was refused: %v", err)
	}
	if err := l.Append(sampleRow("after", 8)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	rows, err = ReadLedger(path)
	if err != nil || len(rows) != 4 {
		t.Fatalf("after upgrade: %d rows, %v", len(rows), err)
	}
	check("upgraded", rows[:3], nil)
	raw, _ := os.ReadFile(path)
	if first, _, _ := strings.Cut(string(raw), "\n"); first != strings.Join(Header(), ",") {
		t.Fatalf("header not upgraded: %s", first)
	}
}

// A manifest written with a list of jobs per scheduler
// (testdata/manifest-before-one-job-list.json) reads back as the one list, each job
// naming its scheduler.
func TestManifestBeforeOneJobListReadsBack(t *testing.T) {
	m, err := ReadManifest("testdata/manifest-before-one-job-list.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Jobs) != 2 || m.Jobs[0].Scheduler != "slurm" || m.Jobs[0].ID != "41" || m.Jobs[0].Node != "node1" ||
		m.Jobs[1].Scheduler != "kubernetes" || m.Jobs[1].Pod != "planrun-kind-1-abcd-0-xyz12" || m.Jobs[1].State != "COMPLETE" {
		t.Fatalf("jobs %+v", m.Jobs)
	}
	// Written again, it has the one list.
	path := filepath.Join(t.TempDir(), "manifest.json")
	if err := WriteManifest(path, m); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), "slurm_jobs") || strings.Contains(string(raw), "kubernetes_jobs") || !strings.Contains(string(raw), `"jobs"`) {
		t.Errorf("rewritten manifest:\n%s", raw)
	}
	again, err := ReadManifest(path)
	if err != nil || len(again.Jobs) != 2 {
		t.Errorf("read again: %+v, %v", again.Jobs, err)
	}
}
