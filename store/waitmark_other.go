//go:build !linux

package store

import "os"

// Without Linux's open-file-description locks, waiters leave no mark and
// take the file in no particular order, and a writer's lease ends only
// when it is idle or has held the file for maxLeaseHold; readers wait at
// most that long.

func markWaiting(*os.File) int64        { return 0 }
func markWaitingAt(*os.File, int64)     {}
func unmarkWaiting(*os.File)            {}
func othersWaiting(*os.File) bool       { return false }
func waitingAhead(*os.File, int64) bool { return false }
