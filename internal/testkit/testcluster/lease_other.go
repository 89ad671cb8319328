//go:build !unix

package testcluster

import (
	"errors"
	"os"
)

// lockShared refuses: the Slurm test cluster runs on Linux only.
func lockShared(*os.File) error { return errors.New("the test clusters need a Unix system") }
