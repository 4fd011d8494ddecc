package store

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
)

// bootID is the kernel's id of this boot, "" if it cannot be read.
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})

// processStarted is when process pid started, in clock ticks since boot
// (proc(5), /proc/PID/stat field 22); 0 when there is no such process in
// this pid namespace, or it is a zombie (it has died and waits for its
// parent to read its exit status), or the file cannot be read.
func processStarted(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// Field 2 is the command name in parentheses, which may itself hold
	// spaces and parentheses: the fields from 3 on follow the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" { // f[0] is field 3, the state
		return 0
	}
	ticks, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0
	}
	return ticks
}
