package slurm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/planrun/planrun/placement"
)

// Batch is the status as apply's coordinator acts on it.
func (s status) Batch() placement.Status {
	phase := placement.Failed
	switch {
	case s.State == stateUnknown:
		phase = placement.Unknown
	case s.State == statePending:
		phase = placement.Pending
	case s.State == stateCompleted:
		phase = placement.Completed
	case !s.State.Terminal():
		phase = placement.Running // running, or completing: the script has ended, the node is cleaned up
	}
	return placement.Status{ID: s.ID, Phase: phase, State: s.State.String(), Reason: s.Reason, Node: s.Node, ExitCode: s.ExitCode}
}

// waitShared waits until the job's script has written markerFile into job.Dir, which
// proves the node sees the coordinator's run directory. It fails, naming the directory,
// when the job ends without writing it or when timeout passes while the job runs (a
// pending job is not the node's fault: the wait for it is ctx's). It returns the node the
// marker names.
func waitShared(ctx context.Context, job JobSpec, jobID string, timeout time.Duration) (string, error) {
	marker := filepath.Join(job.Dir, markerFile)
	var deadline time.Time
	for {
		if node, ok := readMarker(marker, jobID); ok {
			return node, nil
		}
		st, err := jobState(ctx, jobID)
		switch {
		case err != nil && ctx.Err() != nil:
			return "", ctx.Err()
		case err == nil && st.State.Terminal():
			// The marker may land just after the state changes: look once more.
			if node, ok := readMarker(marker, jobID); ok {
				return node, nil
			}
			return "", fmt.Errorf("slurm job %s of hardware %q ended %s without writing %s: the run directory %s is not shared with node %s or not writable there (see %s)",
				jobID, job.Hardware, st.State, markerFile, job.Dir, st.Node, job.LogPath(jobID))
		case err == nil && st.State != statePending && deadline.IsZero():
			deadline = time.Now().Add(timeout)
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return "", fmt.Errorf("slurm job %s of hardware %q has run %s on %s without its marker appearing in %s: is the run directory on a filesystem shared with the node?",
				jobID, job.Hardware, timeout, st.Node, job.Dir)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// readMarker returns the node named in the marker, when the marker is this job's (a
// resumed run's directory may hold an earlier job's).
func readMarker(path, jobID string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	if f := strings.Fields(string(b)); len(f) == 2 && f[0] == jobID {
		return f[1], true
	}
	return "", false
}
