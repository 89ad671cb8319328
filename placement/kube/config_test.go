//go:build !nokube

package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

const twoContexts = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: lab, context: {cluster: c, user: u, namespace: bench}}, {name: prod, context: {cluster: c, user: u}}]
`

// The kubeconfig and the context are checked before anything is sent: a missing file, a
// context the file lacks and a file without a current context each say so, naming the
// hardware block, the file and, for the context, the plan's line.
func TestConnect(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "config")
	os.WriteFile(kc, []byte(twoContexts), 0o600)
	at := hcl.Range{Filename: "plan.hcl", Start: hcl.Pos{Line: 7, Column: 5}, End: hcl.Pos{Line: 7, Column: 20}}
	for _, tc := range []struct {
		name string
		k    Settings
		env  string
		want string // "" for no error
	}{
		{"context", Settings{Kubeconfig: kc, Context: "lab"}, "", ""},
		{"wrong context", Settings{Kubeconfig: kc, Context: "staging", ContextRange: at}, "", `plan.hcl:7,5-20: hardware "gpu": context "staging" is not in the kubeconfig ` + kc + " (its contexts: lab, prod)"},
		{"no current context", Settings{Kubeconfig: kc}, "", "has no current-context: set context (its contexts: lab, prod)"},
		{"missing file", Settings{Kubeconfig: filepath.Join(dir, "nope")}, "", "there is no kubeconfig: " + filepath.Join(dir, "nope") + " does not exist"},
		{"KUBECONFIG", Settings{Context: "prod"}, kc, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.env)
			t.Setenv("HOME", dir) // no ~/.kube/config
			c, err := connect("gpu", &tc.k)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v\nwant %q", err, tc.want)
			case tc.want == "" && tc.k.Context == "lab" && c.namespace != "bench":
				t.Errorf("namespace %q, want the context's", c.namespace)
			case tc.want == "" && tc.k.Context == "prod" && c.namespace != "default":
				t.Errorf("namespace %q, want default", c.namespace)
			}
		})
	}
}
