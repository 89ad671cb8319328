//go:build !unix

package proctest

// Exists is false without Unix process groups: Start refuses there, so no process this
// package started can exist (as servers' groupExists).
func Exists(int) bool { return false }
