package servers

import "testing"

// BenchmarkStartStop is planrun's own overhead around a server that is ready at once:
// process start, readiness polling (20 ms interval), SIGTERM to the group, and reaping.
func BenchmarkStartStop(b *testing.B) {
	spec, opts := serverSpec(b, "bench")
	for b.Loop() {
		p, err := Start(b.Context(), spec, opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}
