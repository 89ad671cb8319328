package plan

import (
	"regexp"

	"github.com/hashicorp/hcl/v2"
)

// unknownFunction is HCL's detail for a call to a function the plan language lacks.
var unknownFunction = regexp.MustCompile(`^There is no function named "([^"]+)"`)

// envFunctions are the names people reach for to read the environment in a plan,
// from Terraform modules, Nomad jobs, Helm templates and shell habits.
var envFunctions = map[string]bool{"env": true, "getenv": true, "environ": true, "environment": true, "os_getenv": true}

// explainEnvCalls tells a call such as env("URL") how a plan reads the environment: a
// plan is committed and shared, so it reads only what it declares, a variable (set by
// PLANRUN_VAR_<name>) or a key's variable name (api_key_env), never any variable at will.
func explainEnvCalls(diags hcl.Diagnostics) {
	for _, d := range diags {
		if d.Summary != "Call to unknown function" {
			continue
		}
		if m := unknownFunction.FindStringSubmatch(d.Detail); m != nil && envFunctions[m[1]] {
			d.Detail = `There is no function named "` + m[1] + `": a plan reads the environment only through what it declares. For a value, declare variable "url" {} and use var.url, set by ` + envVarPrefix + `url=… in the environment (or -var url=…); for an API key, name its variable in the backend's api_key_env.`
		}
	}
}
