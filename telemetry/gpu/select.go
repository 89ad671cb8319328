package gpu

import (
	"fmt"
	"slices"
)

// Select is the Telemetry of the GPUs with these NVML indexes only, in that order (a
// hardware block's gpus, which the server sees as CUDA_VISIBLE_DEVICES): its samplers,
// baselines and Info cover exactly those devices. An index NVML does not have is an
// error naming the devices there are. Closing the selection closes nothing; close t.
func (t *Telemetry) Select(indexes []int) (*Telemetry, error) {
	if !t.Available() {
		return nil, fmt.Errorf("GPUs %v asked for, but %s", indexes, t.Note())
	}
	sel := &Telemetry{info: t.info, now: t.now}
	sel.info.Devices = nil
	var pos []int
	for _, want := range indexes {
		i := slices.IndexFunc(t.info.Devices, func(d Device) bool { return d.Index == want })
		if i < 0 {
			return nil, fmt.Errorf("no GPU %d: NVML sees %s", want, deviceNames(t.info.Devices))
		}
		pos = append(pos, i)
		sel.info.Devices = append(sel.info.Devices, t.info.Devices[i])
	}
	sel.r = subsetReader{r: t.r, pos: pos}
	return sel, nil
}

// subsetReader reads device k of a selection as device pos[k] of the whole machine.
type subsetReader struct {
	r   reader
	pos []int
}

func (s subsetReader) memory(dev int) (uint64, uint64, bool) { return s.r.memory(s.pos[dev]) }
func (s subsetReader) utilization(dev int) (uint32, uint32, bool) {
	return s.r.utilization(s.pos[dev])
}
func (s subsetReader) power(dev int) (uint32, bool)  { return s.r.power(s.pos[dev]) }
func (s subsetReader) energy(dev int) (uint64, bool) { return s.r.energy(s.pos[dev]) }
func (s subsetReader) processes(dev int, buf []procMem) ([]procMem, bool) {
	return s.r.processes(s.pos[dev], buf)
}

// close does nothing: the selection shares the machine's NVML session.
func (subsetReader) close() {}
