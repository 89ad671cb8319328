package plan

import (
	"strings"
	"testing"
)

// TestMessagesShowVariableValues: whichever check reports a value, the message shows
// the variables it came from, as HCL's own errors do.
func TestMessagesShowVariableValues(t *testing.T) {
	src := `
variable "levels" { default = [0, 4] }
variable "host" { default = "http://gpu1.lab" }
variable "grace" { default = "30" }
locals { url = "localhost:${var.port}" }
variable "port" { default = 8000 }
variable "reps" {
  default = 0
  validation {
    condition     = var.reps > 0
    error_message = "At least 1."
  }
}
backend "openai" "v" { url = local.url }
hardware "h" { host = var.host }
server "s" {
  command = ["vllm", "serve", "m"]
  grace   = var.grace
}
workload "w" { concurrency = var.levels }
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.v]
  hardware = [hardware.h]
  workload = [workload.w]
}
`
	_, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
	out := renderDiags(nil, diags)
	for _, want := range []string{
		`var.levels is [0, 4]`,
		`var.host is "http://gpu1.lab"`,
		`var.grace is "30"`,
		`local.url is "localhost:8000"`,
		`var.reps is 0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diagnostics do not show %s:\n%s", want, out)
		}
	}
}

// TestSensitiveValuesHidden: a sensitive variable's value is never printed in a message.
func TestSensitiveValuesHidden(t *testing.T) {
	src := `
variable "gw" {
  default   = "http://secret-host.internal"
  sensitive = true
}
backend "ollama" "o" {}
hardware "h" { host = var.gw }
workload "w" {}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.o]
  hardware = [hardware.h]
  workload = [workload.w]
}
`
	_, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
	out := renderDiags(nil, diags)
	if !strings.Contains(out, "var.gw is sensitive (not shown)") {
		t.Errorf("no sensitive note:\n%s", out)
	}
	if strings.Contains(out, "secret-host") {
		t.Errorf("the sensitive value is printed:\n%s", out)
	}
}

// TestListVarWithoutBrackets: -var levels=1,2 for a list says how a list is written.
func TestListVarWithoutBrackets(t *testing.T) {
	src := `variable "levels" {
  type    = list(number)
  default = [1]
}
`
	_, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv, Vars: []string{"levels=1,2"}})
	if !diags.HasErrors() || !strings.Contains(diags[0].Detail, `did you mean "[1,2]"?`) {
		t.Errorf("diagnostics: %v", diags)
	}
}
