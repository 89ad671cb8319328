package plan

import (
	"reflect"
	"testing"
)

// The files a plan reads while it loads are recorded, once each.
func TestReadFiles(t *testing.T) {
	src := `
backend "openai" "vllm" { url = "http://127.0.0.1:8000/v1" }
workload "w" { prompt_file = "prompt.txt" }
workload "w2" { prompt = "${file("prompt.txt")} ${file("extra.txt")}" }
matrix "m" {
  model    = ["x"]
  tool     = [backend.openai.vllm]
  workload = [workload.w]
}
`
	dir := t.TempDir()
	write := func(name, s string) {
		if err := writeFile(dir+"/"+name, s); err != nil {
			t.Fatal(err)
		}
	}
	write("plan.hcl", src)
	write("prompt.txt", "hello")
	write("extra.txt", "more")
	p, diags := Load(dir+"/plan.hcl", LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if want := []string{dir + "/prompt.txt", dir + "/extra.txt"}; !reflect.DeepEqual(p.ReadFiles, want) {
		t.Errorf("ReadFiles = %v, want %v", p.ReadFiles, want)
	}
}
