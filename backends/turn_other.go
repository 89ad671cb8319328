//go:build !linux

package backends

// rawWrites is off: a held write goes through the connection's Write.
const rawWrites = false

// rawWrite is unused off Linux: writeNow writes through the connection.
func (c *turnConn) rawWrite(fd uintptr) bool { return true }
