//go:build !unix

package slurmtest

import (
	"errors"
	"os"
)

// lockShared refuses: the Slurm test cluster runs on Linux only.
func lockShared(*os.File) error { return errors.New("the Slurm test cluster needs a Unix system") }
