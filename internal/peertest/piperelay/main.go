// Command piperelay runs a command and copies bytes between its own stdin
// and stdout and the command's, and does nothing else: no framing, no
// recording. Benchmarks put it beside mcpspy on stdio to measure what any
// process in the middle costs on the machine, the floor under mcpspy's
// own overhead.
//
//	piperelay COMMAND [ARG...]
//
// The command's stderr is passed through; piperelay exits when the
// command does, with its exit code.
package main

import (
	"errors"
	"io"
	"log"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: piperelay COMMAND [ARG...]")
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	// Pipes of our own, not our stdin and stdout handed down: the bytes
	// must pass through this process, as they pass through mcpspy.
	in, err := cmd.StdinPipe()
	if err != nil {
		log.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	go func() {
		_, _ = io.Copy(in, os.Stdin)
		in.Close() // the client's end is the command's end of input
	}()
	_, _ = io.Copy(os.Stdout, out)
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
}
