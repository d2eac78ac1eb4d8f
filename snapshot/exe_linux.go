package snapshot

import (
	"os"
	"strconv"
)

// executable returns the path of pid's main executable, or "" when it is
// unknown (the process is gone).
func executable(pid int) string {
	exe, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	return exe
}
