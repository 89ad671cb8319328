// Package shell quotes words for a POSIX shell: the batch scripts planrun writes, the
// ssh command lines that start remote load agents and the resume command it prints.
package shell

import "strings"

// Quote quotes s for bash when it holds anything but plain path characters.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
