package peertest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// StatusKB reads a field of /proc/PID/status counted in kB ("VmHWM", the
// peak resident set; "RssAnon"; …) as KiB. ok is false once the process
// is gone (or a zombie, which has no memory), or off Linux.
func StatusKB(pid int, field string) (kb int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, found := strings.CutPrefix(line, field+":"); found {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return n, err == nil
		}
	}
	return 0, false
}
