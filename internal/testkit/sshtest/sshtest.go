// Package sshtest gives tests a private OpenSSH server on a free loopback port, which
// lets a root login in with a key made for the test and nothing else: what a plan's
// agents { hosts } reaches, on this machine. Without root, or without Debian's
// openssh-server and openssh-client, the test skips naming the install, or fails under
// PLANRUN_INTEGRATION (realserver.Missing).
package sshtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/testkit/realserver"
)

const sshd = "/usr/sbin/sshd"

// Start starts the server for the test and returns the ssh command (with its options:
// the test's key, the port, no host key checks) that reaches it as root; the server
// stops when the test ends.
func Start(t testing.TB) []string {
	t.Helper()
	if os.Geteuid() != 0 {
		realserver.Missing(t, "the test's sshd lets root in by key; not root")
	}
	if why := realserver.SystemMissing("ssh"); why != "" {
		realserver.Missing(t, why)
	}
	dir := t.TempDir()
	for _, k := range []string{"host_key", "client_key"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, k)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
	}
	pub, err := os.ReadFile(filepath.Join(dir, "client_key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	config := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
AuthorizedKeysFile %s
PidFile %s
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
`, port, filepath.Join(dir, "host_key"), filepath.Join(dir, "authorized_keys"), filepath.Join(dir, "sshd.pid"))
	cfg := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll("/run/sshd", 0o755) // sshd's privilege separation directory
	cmd := exec.Command(sshd, "-D", "-e", "-f", cfg)
	log, err := os.Create(filepath.Join(dir, "sshd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		} else if i == 200 {
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("sshd did not listen on %s: %v\n%s", addr, err, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return []string{"ssh", "-F", "/dev/null", "-i", filepath.Join(dir, "client_key"), "-p", strconv.Itoa(port),
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-l", "root"}
}
