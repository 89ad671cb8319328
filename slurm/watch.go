package slurm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Line is the job's progress line: "job 12 small: PENDING (Resources)", "job 12 small:
// RUNNING on node1", "job 12 small: COMPLETED on node1".
func (s Status) Line(name string) string {
	head := fmt.Sprintf("job %s %s: %s", s.ID, name, s.State)
	switch {
	case s.State == Pending && s.Reason != "" && s.Reason != "None":
		return head + " (" + s.Reason + ")"
	case s.Node != "" && s.State != Pending:
		return head + " on " + s.Node
	}
	return head
}

// WaitShared waits until the job's script has written MarkerFile into job.Dir, which
// proves the node sees the coordinator's run directory. It fails, naming the directory,
// when the job ends without writing it or when timeout passes while the job runs (a
// pending job is not the node's fault: the wait for it is ctx's). It returns the node the
// marker names.
func WaitShared(ctx context.Context, job JobSpec, jobID string, timeout time.Duration) (string, error) {
	marker := filepath.Join(job.Dir, MarkerFile)
	var deadline time.Time
	for {
		if node, ok := readMarker(marker, jobID); ok {
			return node, nil
		}
		st, err := JobState(ctx, jobID)
		switch {
		case err != nil && ctx.Err() != nil:
			return "", ctx.Err()
		case err == nil && st.State.Terminal():
			// The marker may land just after the state changes: look once more.
			if node, ok := readMarker(marker, jobID); ok {
				return node, nil
			}
			return "", fmt.Errorf("slurm job %s of hardware %q ended %s without writing %s: the run directory %s is not shared with node %s or not writable there (see %s)",
				jobID, job.Hardware, st.State, MarkerFile, job.Dir, st.Node, job.LogPath(jobID))
		case err == nil && st.State != Pending && deadline.IsZero():
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
