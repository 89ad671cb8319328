//go:build !unix

package ollamatest

import "errors"

// Without Unix process groups serve's runners could not be stopped with it, so
// the helper refuses to start rather than leak processes.
var errUnsupported = errors.New("ollamatest needs Unix process groups to stop ollama and its runners")

func checkPlatform() error { return errUnsupported }

func signalGroup(pgid int, kill bool) {}

func groupMembers(pgid int) []int { return nil }
