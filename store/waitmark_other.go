//go:build !linux

package store

import "os"

// Without Linux's open-file-description locks, waiters leave no mark and a
// writer's lease ends only when it is idle or has held the file for
// maxLeaseHold; readers wait at most that long.

func markWaiting(*os.File)        {}
func unmarkWaiting(*os.File)      {}
func othersWaiting(*os.File) bool { return false }
