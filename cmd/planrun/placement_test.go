package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/planrun/planrun/placement/kube"
)

const placementPlan = "../../plan/testdata/valid-files/placement.hcl"

// plan shows where each cell runs, in the table and in the JSON.
func TestPlanShowsPlacement(t *testing.T) {
	code, out, errs := runCmd(t, "", "plan", placementPlan)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"openai.vllm/laptop/w openai.vllm qwen - laptop w 1 - this machine",
		"openai.vllm/box/w openai.vllm qwen - box w 1 - host gpu1.lab",
		"openai.vllm/h200/w openai.vllm qwen - h200 w 1 - Slurm partition large",
		"openai.vllm/a100/w openai.vllm qwen - a100 w 1 - Slurm partition small",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCmd(t, "", "plan", "-json", "-only", "*h200*", placementPlan)
	var doc struct {
		Cells []struct {
			Placement string
			RunsOn    string `json:"runs_on"`
		}
	}
	if code != exitOK || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Cells) != 1 ||
		doc.Cells[0].Placement != "slurm" || doc.Cells[0].RunsOn != "Slurm partition large" {
		t.Errorf("exit %d json:\n%s", code, out)
	}
}

// -slurm-script prints what would be submitted, with the -var values apply would pass;
// it submits nothing (no sbatch is on PATH here).
func TestPlanSlurmScript(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	code, out, errs := runCmd(t, "", "plan", "-slurm-script", "a100", "-var", "partition=gpu", placementPlan)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"#!/bin/bash\n",
		"#SBATCH --job-name=planrun-placement-a100\n#SBATCH --output=RUN_DIR/slurm/a100/slurm-%j.out\n#SBATCH --partition=small\n#SBATCH --gres=gpu:a100:1\n",
		"exec /shared/bin/planrun apply -quiet -run-dir RUN_DIR/slurm/a100 -only m/qwen/-/openai.vllm/a100/w -var partition=gpu /",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("script lacks %q:\n%s", want, out)
		}
	}
	for hw, want := range map[string]string{
		"box":  `hardware "box" has no slurm block: its cells run on host gpu1.lab`,
		"h20":  `no selected cell of hardware "h20" runs on Slurm; the Slurm hardware of the selected cells: a100, h200`,
		"a100": `no selected cell runs on Slurm`,
	} {
		args := []string{"plan", "-slurm-script", hw, placementPlan}
		if hw == "a100" {
			args = []string{"plan", "-slurm-script", hw, "-only", "*laptop*", placementPlan}
		}
		if code, out, errs := runCmd(t, "", args...); code != exitUsage || out != "" || !strings.Contains(errs, want) {
			t.Errorf("-slurm-script %s: exit %d, stdout %q, stderr %q; want %q", hw, code, out, errs, want)
		}
	}
	// validate stays offline: no Slurm command is needed.
	if code, out, errs := runCmd(t, "", "validate", placementPlan); code != exitOK {
		t.Errorf("validate without sbatch: exit %d\n%s%s", code, out, errs)
	}
}

// The placement examples validate (offline) and place their cells as their comments say.
func TestPlacementExamples(t *testing.T) {
	for f, want := range map[string][]string{
		"../../examples/slurm.hcl":        {"Slurm partition small", "Slurm partition large"},
		"../../examples/remote-hosts.hcl": {"http://gpu1.lab:11434", "http://gpu2.lab:8000/v1"},
		"../../examples/kubernetes.hcl":   {"Kubernetes context planrun namespace planrun"},
	} {
		cells := "2 cells"
		if code, out, errs := runCmd(t, "", "validate", f); code != exitOK || out != "Success! The plan is valid: "+cells+".\n" {
			t.Errorf("validate %s: exit %d\n%s%s", f, code, out, errs)
		}
		code, out, errs := runCmd(t, "", "plan", "-json", f)
		if code != exitOK {
			t.Fatalf("plan %s: exit %d: %s", f, code, errs)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("plan -json %s lacks %q:\n%s", f, w, out)
			}
		}
	}
}

// -k8s-manifest prints the ConfigMap and the Indexed Job apply would create, sending
// nothing (no kubeconfig is read), and names what is wrong with the hardware asked for.
// The fleet cell, of two load agents, is a Job of two completions with its Secret and
// headless Service, whose every pod runs `planrun agent -lead -- apply ...`.
func TestPlanK8sManifest(t *testing.T) {
	t.Setenv("KUBECONFIG", "/nonexistent")
	code, out, errs := runCmd(t, "", "plan", "-k8s-manifest", "cluster", "-var", "namespace=bench", "../../examples/kubernetes.hcl")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"kind: ConfigMap\n", "---\napiVersion: batch/v1\nkind: Job\n", "  completionMode: Indexed\n  completions: 1\n",
		"  backoffLimit: 0\n", "planrun.dev/run: RUN_ID", "namespace: bench\n", "        - -stream\n",
		"        - /planrun/input/plan/kubernetes.hcl\n", "    namespace = \"bench\"\n", "  ttlSecondsAfterFinished: 3600\n",
		"# RUN_ID stands for the run apply creates",
		"kind: Secret\n", "kind: Service\n", "  clusterIP: None\n", "  publishNotReadyAddresses: true\n",
		"  backoffLimitPerIndex: 0\n  completionMode: Indexed\n  completions: 2\n  parallelism: 2\n",
		"        - agent\n        - -lead\n        - --\n        - apply\n", "        - name: PLANRUN_AGENT_TOKEN\n          valueFrom:\n            secretKeyRef:\n",
		"      subdomain: planrun-cluster-2-", "# apply puts a new random token in each Secret's key \"token\"",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("manifest lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "kind: Job\n"); n != 2 || strings.Count(out, "kind: Secret\n") != 1 || !strings.Contains(out, "  completions: 1\n") {
		t.Errorf("%d Jobs, want the quick cell's of one completion and the fleet cell's of two, one Secret:\n%s", n, out)
	}
	for hw, want := range map[string]string{
		"box":  `hardware "box" has no kubernetes block: its cells run on host gpu1.lab`,
		"nope": `no selected cell runs on Kubernetes: no hardware "nope" with a kubernetes block`,
	} {
		if code, out, errs := runCmd(t, "", "plan", "-k8s-manifest", hw, placementPlan); code != exitUsage || out != "" || !strings.Contains(errs, want) {
			t.Errorf("-k8s-manifest %s: exit %d, stdout %q, stderr %q; want %q", hw, code, out, errs, want)
		}
	}
}

// The pod failure policy names planrun's exit codes: kube's table agrees with this one.
func TestKubeExitClasses(t *testing.T) {
	for _, e := range exitCodes {
		if e.code == exitOK || e.code == exitUsage && e.apply == "" {
			continue
		}
		if e.apply != "" && e.code <= exitCellsFailed || e.code == exitInterrupted {
			if got := kube.ExitClass(int32(e.code)); got == "planrun crashed" {
				t.Errorf("exit code %d (%s) has no class in kube", e.code, e.apply)
			}
		}
	}
	if kube.ExitClass(exitCellsFailed) != "a cell failed" || kube.ExitClass(exitExpectation) != "an expect block failed" {
		t.Errorf("classes: %q, %q", kube.ExitClass(exitCellsFailed), kube.ExitClass(exitExpectation))
	}
}
