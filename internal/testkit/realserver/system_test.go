package realserver

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// check is one line of scripts/install-system.sh's list.
type check struct{ group, kind, what, pkg string }

// listedChecks reads the script's list, so the test follows it as it grows.
func listedChecks(t *testing.T, script string) []check {
	t.Helper()
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	var checks []check
	for _, m := range regexp.MustCompile(`(?m)^(\w+)\|(cmd|file|venv):([^|]+)\|([^|]+)\|`).FindAllStringSubmatch(string(b), -1) {
		checks = append(checks, check{m[1], m[2], m[3], m[4]})
	}
	if len(checks) < 20 {
		t.Fatalf("read %d checks from %s: the list's format changed", len(checks), script)
	}
	return checks
}

// The script run as on a fresh machine: PATH holds only fake commands (id, apt-get, sudo,
// and the tools a case has), and the file checks look under a fake root, so what it
// detects and what it would install are seen without installing anything.
func TestInstallSystem(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts", "install-system.sh")
	checks := listedChecks(t, script)
	const aptInstall = "apt-get install -y -qq --no-install-recommends "

	// run runs the script with the checks in absent missing (every other one present).
	run := func(t *testing.T, uid string, sudo bool, absent func(check) bool, args ...string) (out, log string, code int) {
		t.Helper()
		dir := t.TempDir()
		bin, sys, logf := filepath.Join(dir, "bin"), filepath.Join(dir, "root"), filepath.Join(dir, "log")
		write := func(path, body string) {
			t.Helper()
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		write(filepath.Join(bin, "id"), "echo "+uid)
		write(filepath.Join(bin, "apt-get"), `echo "apt-get $*" >>`+logf)
		if sudo {
			write(filepath.Join(bin, "sudo"), `echo "sudo $*" >>`+logf)
		}
		for _, c := range checks {
			gone := absent(c)
			switch {
			case c.kind == "file" && !gone:
				write(filepath.Join(sys, c.what), "")
			case c.kind == "cmd" && !gone:
				if _, err := os.Stat(filepath.Join(bin, c.what)); err != nil {
					write(filepath.Join(bin, c.what), "exit 0")
				}
			}
		}
		for _, c := range checks {
			// The interpreter (when present) without the venv module fails `-c 'import venv, ensurepip'`.
			if _, err := os.Stat(filepath.Join(bin, c.what)); c.kind == "venv" && err == nil {
				write(filepath.Join(bin, c.what), map[bool]string{true: "exit 1", false: "exit 0"}[absent(c)])
			}
		}
		cmd := exec.Command(bash, append([]string{script}, args...)...)
		cmd.Env = []string{"PATH=" + bin, "INSTALL_SYSTEM_ROOT=" + sys}
		b, err := cmd.Output()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		l, _ := os.ReadFile(logf)
		return string(b), string(l), code
	}
	// packages lists, each once and in the list's order, the packages of the absent checks
	// in groups (all when empty); a venv check is absent with its interpreter.
	packages := func(absent func(check) bool, groups ...string) []string {
		var pkgs []string
		for _, c := range checks {
			gone := absent(c) || c.kind == "venv" && slices.ContainsFunc(checks, func(d check) bool {
				return d.kind == "cmd" && d.what == c.what && absent(d)
			})
			if gone && (len(groups) == 0 || slices.Contains(groups, c.group)) && !slices.Contains(pkgs, c.pkg) {
				pkgs = append(pkgs, c.pkg)
			}
		}
		return pkgs
	}
	none := func(check) bool { return false }
	all := func(check) bool { return true }

	// -n: the missing packages, one a line, then the one command; exit 1 when any.
	dry := []struct {
		name   string
		absent func(check) bool
		groups []string
	}{
		{"fresh machine", all, nil},
		{"nothing missing", none, nil},
		{"fresh machine, slurm only", all, []string{"slurm"}},
		{"fresh machine, ssh and chromium", all, []string{"ssh", "chromium"}},
	}
	for _, c := range checks {
		dry = append(dry, struct {
			name   string
			absent func(check) bool
			groups []string
		}{"only " + c.what + " missing", func(d check) bool { return d == c }, nil})
	}
	for _, tc := range dry {
		t.Run("dry/"+tc.name, func(t *testing.T) {
			out, log, code := run(t, "0", true, tc.absent, append([]string{"-n"}, tc.groups...)...)
			want := packages(tc.absent, tc.groups...)
			if log != "" {
				t.Errorf("-n ran %q", log)
			}
			if len(want) == 0 {
				if code != 0 || out != "" {
					t.Errorf("nothing missing: exit %d, stdout %q; want 0 and nothing", code, out)
				}
				return
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			var got []string
			for _, l := range lines[:len(lines)-1] {
				got = append(got, strings.Fields(l)[0])
			}
			if code != 1 || !slices.Equal(got, want) {
				t.Errorf("exit %d, listed %v; want 1 and %v\n%s", code, got, want, out)
			}
			if cmd := "apt-get update && " + aptInstall + strings.Join(want, " "); lines[len(lines)-1] != cmd {
				t.Errorf("last line %q, want %q", lines[len(lines)-1], cmd)
			}
		})
	}

	// Installing: as root, through sudo, or (neither) the command printed and exit 1.
	ssh := func(c check) bool { return c.group == "ssh" }
	sshPkgs := strings.Join(packages(ssh), " ")
	for _, tc := range []struct {
		name     string
		uid      string
		sudo     bool
		absent   func(check) bool
		code     int
		out, log string
	}{
		{"root", "0", false, ssh, 0, "", "apt-get update -qq\n" + aptInstall + sshPkgs + "\n"},
		{"sudo", "1000", true, ssh, 0, "", "sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq\nsudo DEBIAN_FRONTEND=noninteractive " + aptInstall + sshPkgs + "\n"},
		{"no sudo", "1000", false, ssh, 1, "apt-get update && " + aptInstall + sshPkgs + "\n", ""},
		{"nothing missing", "1000", false, none, 0, "", ""},
	} {
		t.Run("install/"+tc.name, func(t *testing.T) {
			out, log, code := run(t, tc.uid, tc.sudo, tc.absent)
			if code != tc.code || out != tc.out || log != tc.log {
				t.Errorf("exit %d, stdout %q, ran %q; want %d, %q, %q", code, out, log, tc.code, tc.out, tc.log)
			}
		})
	}

	t.Run("unknown group", func(t *testing.T) {
		if _, log, code := run(t, "0", false, all, "slurmm"); code != 2 || log != "" {
			t.Errorf("exit %d, ran %q; want 2 and nothing run", code, log)
		}
	})
}
