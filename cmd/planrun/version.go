package main

import (
	"context"
	"fmt"

	"github.com/planrun/planrun/apply"
	"github.com/planrun/planrun/internal/version"
)

func init() {
	register("version", "print planrun's version and the placements it was built with", func(_ context.Context, env *Env, args []string) int {
		fmt.Fprintf(env.Stdout, "planrun %s\nplacements: %s\n", version.String(), apply.Build())
		return exitOK
	})
}
