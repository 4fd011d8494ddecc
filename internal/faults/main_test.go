package faults_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var long = flag.Bool("faults.long", os.Getenv("MCPTAPE_LONG") == "1", "run the long forms (100 SIGKILLs, 1M-message soak)")

// pick returns the short or the long form of a test size.
func pick(short, long_ int) int {
	if *long {
		return long_
	}
	return short
}

// The test binary doubles as the stdio servers the faults need: with
// MCPTAPE_FAKE_SERVER set, TestMain runs one instead of the tests. Each
// reads its parameters from the environment.
func TestMain(m *testing.M) {
	switch mode := os.Getenv("MCPTAPE_FAKE_SERVER"); mode {
	case "":
		flag.Parse()
		os.Exit(m.Run())
	case "big":
		bigServer()
	case "bigrun":
		bigRunServer()
	case "fallback":
		fallbackServer()
	case "flood":
		floodServer()
	case "crash":
		crashServer()
	case "hang":
		hangServer()
	default:
		fmt.Fprintf(os.Stderr, "unknown MCPTAPE_FAKE_SERVER %q\n", mode)
		os.Exit(3)
	}
	os.Exit(0)
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

// bigFrame is a JSON-RPC response of exactly size bytes (without "\n").
func bigFrame(id, size int) []byte {
	head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"blob":"`, id)
	const tail = `"}}`
	// Filled by bytes.Repeat, not a loop: under -race each byte a loop
	// writes is checked, and a 64 MiB frame took seconds.
	b := bytes.Repeat([]byte{'A'}, size)
	copy(b, head)
	copy(b[size-len(tail):], tail)
	return b
}

// bigServer answers every line: a request whose method is "big" gets a
// response of MCPTAPE_BIG_SIZE bytes, anything else a small response
// giving the line's length. It never holds a whole line: it streams what
// it reads through a counter.
func bigServer() {
	size := envInt("MCPTAPE_BIG_SIZE", 64<<20)
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	for id := 1; ; id++ {
		n, isBig, err := countLine(r)
		if n == 0 && err != nil {
			return
		}
		if isBig {
			w.Write(bigFrame(id, size))
		} else {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"len":%d}}`, id, n)
		}
		w.WriteString("\n")
		w.Flush()
	}
}

// bigRunServer writes MCPTAPE_BIG_N frames of MCPTAPE_BIG_SIZE bytes
// unasked, as fast as its stdout takes them, then waits for stdin to
// close.
func bigRunServer() {
	size, n := envInt("MCPTAPE_BIG_SIZE", 64<<20), envInt("MCPTAPE_BIG_N", 8)
	for id := 1; id <= n; id++ {
		if _, err := os.Stdout.Write(append(bigFrame(id, size), '\n')); err != nil {
			return
		}
	}
	io.Copy(io.Discard, os.Stdin)
}

// countLine reads one line and says how long it was and whether it asked
// for the big frame (a "big" method in its first 64 KiB).
func countLine(r *bufio.Reader) (n int, isBig bool, err error) {
	first := true
	for {
		chunk, err := r.ReadSlice('\n')
		if first {
			isBig = strings.Contains(string(chunk), `"method":"big"`)
			first = false
		}
		n += len(chunk)
		if err != bufio.ErrBufferFull {
			return n, isBig, err
		}
	}
}

// floodServer writes MCPTAPE_FLOOD_N numbered notifications of about
// MCPTAPE_FLOOD_PAD bytes, pausing 1 ms every MCPTAPE_FLOOD_BURST of them
// (0: no pauses) so the stream lasts a while, then waits for stdin to close.
func floodServer() {
	n, pad, burst := envInt("MCPTAPE_FLOOD_N", 1000), envInt("MCPTAPE_FLOOD_PAD", 100), envInt("MCPTAPE_FLOOD_BURST", 0)
	padding := strings.Repeat("p", pad)
	w := bufio.NewWriterSize(os.Stdout, 16<<10)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"n":%d,"pad":"%s"}}}`+"\n", i, padding)
		if burst > 0 && i%burst == 0 {
			if w.Flush() != nil {
				return
			}
			time.Sleep(time.Millisecond) // a stream that lasts a while, not one burst
		}
	}
	w.Flush()
	io.Copy(io.Discard, os.Stdin)
}

// crashServer answers the first request with a progress notification and
// then dies mid-call: MCPTAPE_CRASH=exit exits with status 70,
// MCPTAPE_CRASH=kill kills itself with SIGKILL.
func crashServer() {
	r := bufio.NewReader(os.Stdin)
	if _, err := r.ReadString('\n'); err != nil {
		return
	}
	fmt.Println(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"total":10}}`)
	if os.Getenv("MCPTAPE_CRASH") == "kill" {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	fmt.Fprintln(os.Stderr, "fake server: crashing mid-call")
	os.Exit(70)
}

// hangServer reads requests and never answers; it ignores stdin closing
// and SIGTERM, so only SIGKILL ends it.
// hangReady is the line hangServer writes when it ignores SIGTERM.
const hangReady = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"deaf to SIGTERM now"}}`

func hangServer() {
	signal.Ignore(syscall.SIGTERM)
	// Said once SIGTERM is ignored: a test that waits for it knows that a
	// SIGTERM cannot end the server (under -race on a busy machine the
	// process may take longer to get here than a short grace).
	fmt.Println(hangReady)
	io.Copy(io.Discard, os.Stdin)
	for {
		time.Sleep(time.Hour)
	}
}
