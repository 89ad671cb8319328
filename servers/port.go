package servers

import (
	"fmt"
	"net"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago, for plans that
// start a server on "any free port". Another process may take the port before the
// server binds it; the server then fails to start, and Start says so with its log tail.
// A deliberate seam for the real-server test helpers (vllmtest, gatewaytest), which start
// their servers on a free port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
