package realserver

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
)

// SystemMissing says which Debian packages of scripts/install-system.sh's groups (build,
// ollama, python, vllm, slurm, k8s, ssh, chromium) this machine lacks, with the command that
// installs them; "" when none is missing. It asks the script (-n), whose list is the one
// scripts/test.sh and .ci/run install from, so a test kit cannot look for a tool the
// install leaves out.
func SystemMissing(groups ...string) string {
	root, err := RepoRoot()
	if err != nil {
		return "cannot find scripts/install-system.sh: " + err.Error()
	}
	script := filepath.Join(root, "scripts", "install-system.sh")
	out, err := exec.Command(script, append([]string{"-n"}, groups...)...).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return "missing Debian packages (scripts/install-system.sh " + strings.Join(groups, " ") +
			" installs them; scripts/test.sh runs it):\n" + strings.TrimSpace(string(out))
	default:
		return "scripts/install-system.sh -n " + strings.Join(groups, " ") + ": " + err.Error() + "\n" + strings.TrimSpace(string(out))
	}
}
