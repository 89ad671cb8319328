//go:build !nokube

package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
)

// cluster is a client of the cluster a kubernetes block names.
type cluster struct {
	api       *api
	namespace string
	context   string
	host      string
}

// kubeconfigPaths are the files a block's kubeconfig means: its own, or $KUBECONFIG (a
// list), or ~/.kube/config.
func kubeconfigPaths(k *Settings) []string {
	if k.Kubeconfig != "" {
		return []string{expandHome(k.Kubeconfig)}
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		return filepath.SplitList(env)
	}
	return []string{filepath.Join(homeDir(), ".kube", "config")}
}

func homeDir() string {
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "~"
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		return filepath.Join(homeDir(), strings.TrimPrefix(p, "~"))
	}
	return p
}

// connect reads the block's kubeconfig and checks that its context exists, before
// anything is sent; the error names the hardware block, the file and, for a context
// that is not there, the plan's line and the contexts the file has.
func connect(hardware string, k *Settings) (*cluster, error) {
	paths := kubeconfigPaths(k)
	var existing []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			existing = append(existing, p)
		}
	}
	if len(existing) == 0 {
		return nil, fmt.Errorf("%s: hardware %q runs its cells on Kubernetes, but there is no kubeconfig: %s does not exist (set kubeconfig, or KUBECONFIG)",
			k.DeclRange, hardware, strings.Join(paths, ", "))
	}
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: existing}
	raw, err := rules.Load()
	if err != nil {
		return nil, fmt.Errorf("%s: hardware %q: reading the kubeconfig %s: %w", k.DeclRange, hardware, strings.Join(existing, ", "), err)
	}
	name := k.Context
	if name == "" {
		name = raw.CurrentContext
	}
	if _, ok := raw.Contexts[name]; !ok {
		var names []string
		for n := range raw.Contexts {
			names = append(names, n)
		}
		slices.Sort(names)
		if name == "" {
			return nil, fmt.Errorf("%s: hardware %q: the kubeconfig %s has no current-context: set context (its contexts: %s)",
				k.DeclRange, hardware, strings.Join(existing, ", "), strings.Join(names, ", "))
		}
		return nil, fmt.Errorf("%s: hardware %q: context %q is not in the kubeconfig %s (its contexts: %s)",
			k.ContextRange, hardware, name, strings.Join(existing, ", "), strings.Join(names, ", "))
	}
	cc := clientcmd.NewNonInteractiveClientConfig(*raw, name, &clientcmd.ConfigOverrides{}, rules)
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("%s: hardware %q: context %q: %w", k.ContextRange, hardware, name, err)
	}
	rc.UserAgent = "planrun"
	ns := k.Namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil || ns == "" {
			ns = "default"
		}
	}
	a, err := newAPI(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: hardware %q: context %q: %w", k.ContextRange, hardware, name, err)
	}
	return &cluster{api: a, namespace: ns, context: name, host: rc.Host}, nil
}
