//go:build !race

package peertest

const raceEnabled = false
