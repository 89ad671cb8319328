package main

import (
	"context"
	"fmt"

	"github.com/planrun/planrun/internal/version"
)

func init() {
	register("version", "print planrun's version", func(_ context.Context, env *Env, args []string) int {
		fmt.Fprintf(env.Stdout, "planrun %s\n", version.String())
		return exitOK
	})
}
