//go:build !linux

package backends

import "net"

// timestampConn is a no-op where the kernel's receive timestamps are not wired up: the
// core stamps chunks with its clock.
func timestampConn(c net.Conn) net.Conn { return c }
