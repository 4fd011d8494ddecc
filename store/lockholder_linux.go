package store

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lockHolders names the processes that hold f's flock(2) lock, as the
// kernel lists them in /proc/locks: "pid 4242 (python3)", comma-separated;
// "" when none can be told (no such file, a process of another pid
// namespace, which the kernel lists as 0 or -1). Told when an open gives
// up waiting (ErrLocked), so that the user can see who keeps the cassette
// (a stuck host, an editor) rather than guess.
func lockHolders(f *os.File) string {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return ""
	}
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return ""
	}
	defer locks.Close()
	var held []string
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 4242 08:02:1311237 0 EOF"; a waiter
		// blocked on it follows as "1: -> FLOCK …".
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || !sameFile(fields[5], &st) {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 {
			continue
		}
		who := "pid " + fields[4]
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
			who += " (" + strings.TrimSpace(string(comm)) + ")"
		}
		held = append(held, who)
	}
	return strings.Join(held, ", ")
}

// sameFile says whether a /proc/locks "MAJOR:MINOR:INODE" (device numbers
// in hex, inode in decimal) is the file st describes.
func sameFile(id string, st *unix.Stat_t) bool {
	parts := strings.Split(id, ":")
	if len(parts) != 3 {
		return false
	}
	major, err1 := strconv.ParseUint(parts[0], 16, 32)
	minor, err2 := strconv.ParseUint(parts[1], 16, 32)
	inode, err3 := strconv.ParseUint(parts[2], 10, 64)
	return err1 == nil && err2 == nil && err3 == nil &&
		uint32(major) == unix.Major(uint64(st.Dev)) && uint32(minor) == unix.Minor(uint64(st.Dev)) && inode == uint64(st.Ino)
}
