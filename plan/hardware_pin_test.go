package plan

import (
	"reflect"
	"strings"
	"testing"
)

const pinPlan = `
backend "ollama" "o" { url = "http://127.0.0.1:11434" }
hardware "cpu1" { cpus = "1" }
hardware "cpu2" {
  cpus = "0-1"
  gpus = [0, 1]
}
workload "w" { prompt = "hi" }
matrix "m" {
  model    = ["x"]
  tool     = [backend.ollama.o]
  hardware = [hardware.cpu1, hardware.cpu2]
  workload = [workload.w]
}
`

func TestHardwarePins(t *testing.T) {
	p, diags := LoadFiles(t.TempDir(), map[string][]byte{"p.hcl": []byte(pinPlan)}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := map[string]Pins{}
	for _, h := range p.Hardware {
		got[h.Name] = h.Pins
	}
	if c := got["cpu1"]; c.CPUs != "1" || !reflect.DeepEqual(c.CPUSet, []int{1}) || c.GPUs != nil || !c.Pinned() {
		t.Errorf("cpu1 pins %+v", c)
	}
	if c := got["cpu2"]; !reflect.DeepEqual(c.CPUSet, []int{0, 1}) || !reflect.DeepEqual(c.GPUs, []int{0, 1}) || c.CPURange.Start.Line != 5 {
		t.Errorf("cpu2 pins %+v", c)
	}
}

func TestHardwarePinsInvalid(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{`cpus = "1"`, `cpus = "1-0"`, "Invalid cpus"},
		{`cpus = "1"`, `cpus = "one"`, "Invalid cpus"},
		{`gpus = [0, 1]`, `gpus = [0, 0]`, "Invalid gpus"},
		{`gpus = [0, 1]`, `gpus = [-1]`, "Invalid gpus"},
		{`hardware "cpu1" { cpus = "1" }`, "hardware \"cpu1\" {\n  cpus = \"1\"\n  host = \"box\"\n}", "Conflicting placement"},
	} {
		src := strings.Replace(pinPlan, c.old, c.new, 1)
		_, diags := LoadFiles(t.TempDir(), map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), c.want) || !strings.Contains(diags.Error(), "p.hcl:") {
			t.Errorf("%s: diagnostics %v, want %q with file and line", c.new, diags, c.want)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string][]int{"0": {0}, "0-3": {0, 1, 2, 3}, "3,0-1": {0, 1, 3}, " 2 , 2": {2}} {
		got, err := ParseCPUList(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "a", "2-1", "-1", "0,"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
