package main

import (
	"fmt"

	"github.com/planrun/planrun/apply"
)

// printCapacities writes each cell's capacity search answer under the summary table.
func printCapacities(env *Env, res *apply.Result) {
	for _, c := range res.Cells {
		if c.Capacity != nil {
			fmt.Fprintf(env.Stdout, "Capacity of %s: %s\n", c.ID, c.Capacity)
		}
	}
}
