package servers

// becomeSubreaper and reapGroup are Unix process-group housekeeping; Windows has none.
func becomeSubreaper() {}

func reapGroup(int) {}
