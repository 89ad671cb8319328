package power

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// command runs a program that prints the power now, in watts, once per reading: any
// meter a script can read (a smart plug's API, ipmitool, a lab meter's serial port).
type command struct{ argv []string }

// Command is a Source that runs argv each reading and reads the first word of its
// standard output as watts.
func Command(argv []string) Source { return command{argv: argv} }

func (c command) Read(ctx context.Context) (float64, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if s := strings.TrimSpace(errb.String()); s != "" {
			return 0, fmt.Errorf("%s: %w: %s", c.argv[0], err, firstLine(s))
		}
		return 0, fmt.Errorf("%s: %w", c.argv[0], err)
	}
	return parseWatts(out.String(), c.argv[0])
}

// parseWatts reads the first word of out as watts: a number, optionally followed by W
// ("231.5", "231.5 W", "231.5W").
func parseWatts(out, who string) (float64, error) {
	f := strings.Fields(out)
	if len(f) == 0 {
		return 0, fmt.Errorf("%s printed nothing (want the power in watts, e.g. \"231.5\")", who)
	}
	w, err := strconv.ParseFloat(strings.TrimSuffix(f[0], "W"), 64)
	if err != nil || w < 0 || w != w {
		return 0, fmt.Errorf("%s printed %q, not a power in watts (e.g. \"231.5\")", who, firstLine(out))
	}
	return w, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

func (command) Counter() bool { return false }

func (c command) String() string { return "command " + strings.Join(c.argv, " ") }
