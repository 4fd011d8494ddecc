package recorder_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as misbehaving stdio servers: with
// MCPTAPE_FAKE_SERVER set, TestMain runs one instead of the tests.
func TestMain(m *testing.M) {
	switch mode := os.Getenv("MCPTAPE_FAKE_SERVER"); mode {
	case "":
		os.Exit(m.Run())
	case "adversarial":
		adversarialServer()
	case "flood":
		n, _ := strconv.Atoi(os.Getenv("MCPTAPE_FLOOD_N"))
		floodServer(n)
	case "exit":
		code, _ := strconv.Atoi(os.Getenv("MCPTAPE_EXIT_CODE"))
		os.Stderr.WriteString(fakeStderr)
		os.Exit(code)
	case "signal":
		n, _ := strconv.Atoi(os.Getenv("MCPTAPE_SIGNAL"))
		os.Stderr.WriteString(fakeStderr)
		syscall.Kill(os.Getpid(), syscall.Signal(n)) // SIGHUP, SIGTERM: the Go runtime dies of it
		io.Copy(io.Discard, os.Stdin)
	case "stubborn":
		stubbornServer()
	case "deaf":
		deafServer()
	default:
		fmt.Fprintf(os.Stderr, "unknown MCPTAPE_FAKE_SERVER %q\n", mode)
		os.Exit(3)
	}
	os.Exit(0)
}

// fakeStderr is what the exit and signal servers write to stderr: escape
// codes, bytes that are not UTF-8, and a last line with no newline.
const fakeStderr = "fake server: \x1b[1mexiting\x1b[0m, \xff\xfe not UTF-8 \xc3\x28\nand a last line with no newline"

// adversarialFrames are lines a proxy must carry byte for byte. The 16 MiB
// line is appended by adversarialServer.
var adversarialFrames = []string{
	"{ \"jsonrpc\" :\"2.0\",  \"id\":1 ,\"result\":{\"b\":1,\"a\":2}}\n",
	"{\"result\":{\"t\":\"\\u00e9\\ud83d\\ude00 caf\u00e9 <&>\"},\"jsonrpc\":\"2.0\",\"id\":\"1\"}\n",
	"this is not JSON\n",
	"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\r\n",
	"[{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}},{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}]\n",
	"\xff\xfe invalid utf-8 \xc3\x28\n",
	"\n",
}

const bigFrameSize = 16 << 20

func bigFrame() string {
	return `{"jsonrpc":"2.0","id":99,"result":{"blob":"` + strings.Repeat("A", bigFrameSize) + `"}}` + "\n"
}

// adversarialServer copies what it receives to the file named by
// MCPTAPE_FAKE_RECEIVED, and after the first line sends adversarialFrames
// and one 16 MiB line.
func adversarialServer() {
	out, err := os.Create(os.Getenv("MCPTAPE_FAKE_RECEIVED"))
	if err != nil {
		panic(err)
	}
	defer out.Close()
	fmt.Fprintln(os.Stderr, "fake server: adversarial, stderr \x1b[1mpasses through\x1b[0m")
	r := bufio.NewReader(os.Stdin)
	first := true
	for {
		line, err := r.ReadBytes('\n')
		out.Write(line)
		if first && len(line) > 0 {
			first = false
			w := bufio.NewWriter(os.Stdout)
			for _, f := range adversarialFrames {
				w.WriteString(f)
			}
			w.WriteString(bigFrame())
			w.WriteString(`{"jsonrpc":"2.0","id":100,"result":{}}`) // no final newline
			w.Flush()
			os.Stdout.Close()
		}
		if err != nil {
			return
		}
	}
}

// floodServer writes n notifications as fast as the pipe takes them, each
// carrying its number, then waits for stdin to close.
func floodServer(n int) {
	w := bufio.NewWriterSize(os.Stdout, 4096)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"n":%d,"pad":"%s"}}}`+"\n", i, strings.Repeat("p", 200))
		if i%50 == 0 {
			w.Flush()
			time.Sleep(time.Millisecond) // a stream that lasts a while, not one burst
		}
	}
	w.Flush()
	io.Copy(io.Discard, os.Stdin)
}

// stubbornServer ignores stdin closing and SIGTERM; only SIGKILL stops it.
func stubbornServer() {
	ignoreTerm()
	fmt.Println(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"stubborn"}}`)
	io.Copy(io.Discard, os.Stdin)
	select {}
}

// deafServer ignores stdin closing; SIGTERM stops it, as it does any Go
// program that does not handle it. It does exit once orphaned (its
// parent, mcpspy, gone), so that a test that fails with mcpspy killed
// leaves no server behind, holding the test's stderr pipe.
func deafServer() {
	fmt.Println(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"deaf"}}`)
	io.Copy(io.Discard, os.Stdin)
	fmt.Fprintln(os.Stderr, "deaf: stdin closed, staying up") // a test may wait for it
	parent := os.Getppid()
	for os.Getppid() == parent { // not synchronisation: it stays up until signalled
		time.Sleep(100 * time.Millisecond)
	}
}
