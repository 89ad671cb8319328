//go:build cgo

package gpu

import (
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Open starts an NVML session on this machine. It never fails: without a driver or a GPU
// the returned Telemetry is not Available and its Note says why. Close it when done.
func Open() *Telemetry {
	return OpenWith(nvml.New())
}

// OpenWith is Open over a given NVML library, such as go-nvml's mock servers in tests.
func OpenWith(lib nvml.Interface) *Telemetry {
	if note := initNote(lib.Init()); note != "" {
		return unavailable(note)
	}
	count, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS || count == 0 {
		lib.Shutdown()
		return unavailable(NoteNoDevice)
	}
	r := &nvmlReader{lib: lib}
	info := Info{MemoryAPI: MemoryAPIv2}
	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		info.DriverVersion = v
	}
	if v, ret := lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		info.CUDADriverVersion = cudaVersionString(v)
	}
	for i := 0; i < count; i++ {
		if dev, ret := lib.DeviceGetHandleByIndex(i); ret == nvml.SUCCESS {
			d, nd, v1 := openDevice(i, dev)
			if v1 {
				info.MemoryAPI = MemoryAPIv1
			}
			info.Devices = append(info.Devices, d)
			r.devs = append(r.devs, nd)
		}
	}
	// One figure per Summary: if any GPU lacks v2, all report v1 so GPUs compare.
	if info.MemoryAPI == MemoryAPIv1 {
		for i := range r.devs {
			r.devs[i].v2 = false
		}
	}
	if len(r.devs) == 0 {
		lib.Shutdown()
		return unavailable(NoteNoDevice)
	}
	return &Telemetry{info: info, r: r, now: time.Now}
}

// initNote says why NVML did not start ("" when it did).
func initNote(ret nvml.Return) string {
	switch ret {
	case nvml.SUCCESS:
		return ""
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return NoteLibraryNotFound
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return NoteDriverNotLoaded
	case nvml.ERROR_NO_PERMISSION:
		return NoteNoPermission
	}
	return "no GPU telemetry: NVML init failed: " + ret.Error()
}

// openDevice reads device i's name, UUID and memory size, and which memory call it
// answers: v2 keeps driver-reserved memory out of "used"; older drivers lack it, and
// answer v1 only (v1).
func openDevice(i int, dev nvml.Device) (d Device, nd nvmlDevice, v1 bool) {
	d = Device{Index: i}
	d.Name, _ = dev.GetName()
	d.UUID, _ = dev.GetUUID()
	nd = nvmlDevice{dev: dev}
	if m, ret := dev.GetMemoryInfo_v2(); ret == nvml.SUCCESS {
		nd.v2 = true
		d.TotalBytes = m.Total
	} else if m, ret := dev.GetMemoryInfo(); ret == nvml.SUCCESS {
		d.TotalBytes = m.Total
		v1 = true
	}
	return d, nd, v1
}

type nvmlReader struct {
	lib  nvml.Interface
	devs []nvmlDevice
}

// nvmlDevice remembers which calls the device does not support, so ticks stop paying
// for them.
type nvmlDevice struct {
	dev                                    nvml.Device
	v2                                     bool
	noUtil, noPower, noEnergy, noProcesses bool
}

func (r *nvmlReader) memory(i int) (used, reserved uint64, ok bool) {
	d := &r.devs[i]
	if d.v2 {
		m, ret := d.dev.GetMemoryInfo_v2()
		return m.Used, m.Reserved, ret == nvml.SUCCESS
	}
	m, ret := d.dev.GetMemoryInfo()
	return m.Used, 0, ret == nvml.SUCCESS
}

func (r *nvmlReader) utilization(i int) (gpu, mem uint32, ok bool) {
	d := &r.devs[i]
	if d.noUtil {
		return 0, 0, false
	}
	u, ret := d.dev.GetUtilizationRates()
	d.noUtil = ret == nvml.ERROR_NOT_SUPPORTED
	return u.Gpu, u.Memory, ret == nvml.SUCCESS
}

func (r *nvmlReader) power(i int) (uint32, bool) {
	d := &r.devs[i]
	if d.noPower {
		return 0, false
	}
	mw, ret := d.dev.GetPowerUsage()
	d.noPower = ret == nvml.ERROR_NOT_SUPPORTED
	return mw, ret == nvml.SUCCESS
}

func (r *nvmlReader) energy(i int) (uint64, bool) {
	d := &r.devs[i]
	if d.noEnergy {
		return 0, false
	}
	mj, ret := d.dev.GetTotalEnergyConsumption()
	d.noEnergy = ret == nvml.ERROR_NOT_SUPPORTED
	return mj, ret == nvml.SUCCESS
}

// processes uses go-nvml's GetComputeRunningProcesses, which picks the newest of the v3,
// v2 and v1 calls the driver has. go-nvml allocates the process list on each call.
func (r *nvmlReader) processes(i int, buf []procMem) ([]procMem, bool) {
	d := &r.devs[i]
	buf = buf[:0]
	if d.noProcesses {
		return buf, false
	}
	ps, ret := d.dev.GetComputeRunningProcesses()
	if ret != nvml.SUCCESS {
		d.noProcesses = ret == nvml.ERROR_NOT_SUPPORTED
		return buf, false
	}
	for _, p := range ps {
		buf = append(buf, procMem{pid: p.Pid, used: p.UsedGpuMemory})
	}
	return buf, true
}

func (r *nvmlReader) close() { r.lib.Shutdown() }
