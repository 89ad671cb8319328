package plan_test

import (
	"github.com/planrun/planrun/apply"
	"github.com/planrun/planrun/plan"
)

// The tests load plans with the placement kinds planrun registers (apply's table), so
// the slurm and kubernetes blocks of the test files are decoded as they are for real.
func init() { plan.SetTestPlacements(apply.Placements()) }
