package mach

// StackWindow returns where a bulk stack copy starts and how many bytes it
// takes: from sp up to the end of the region that holds it
// ([regionLo, regionHi), from mach_vm_region), at most capacity bytes. n is
// 0 when sp is not inside the region or capacity is not positive; the walk
// then has only the registers.
func StackWindow(sp, regionLo, regionHi uint64, capacity int) (base uint64, n int) {
	if capacity <= 0 || sp < regionLo || sp >= regionHi {
		return sp, 0
	}
	avail := regionHi - sp
	if avail > uint64(capacity) {
		avail = uint64(capacity)
	}
	return sp, int(avail)
}
