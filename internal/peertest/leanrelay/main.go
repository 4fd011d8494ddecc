// Command leanrelay is an experiment, not a product: the leanest
// recording HTTP/1.1 hop we could write, to learn what that design would
// cost beside mcpspy (BenchmarkHTTPRoundTrip runs it when
// MCPTAPE_BENCH_LEAN names its binary). One goroutine per client
// connection reads a request head and body, records the body, writes both
// upstream unchanged, reads the answer's head and forwards each chunk as
// read, recording each SSE event: all inline, no net/http, no handoffs
// between goroutines. It does nothing else a recorder must (no sessions
// by id, no redaction, no Origin check, no client-gone detection) and
// handles only what the benchmark sends (Content-Length requests,
// Content-Length or chunked answers).
//
//	leanrelay -upstream 127.0.0.1:PORT -o CASSETTE
//
// It listens on 127.0.0.1, prints "leanrelay: listening on
// http://HOST:PORT" to stderr when ready, and runs on half the cores
// unless GOMAXPROCS is set, as mcpspy's network proxy does.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"time"

	"github.com/mcptape/mcptape/internal/peertest/hop"
	"github.com/mcptape/mcptape/store"
)

func main() {
	hop.ServeRecording("leanrelay", store.WriterOptions{NoSync: true}, relay)
}

type head struct {
	raw     []byte
	first   string
	header  http.Header
	length  int64
	chunked bool
}

func readHead(br *bufio.Reader) (*head, error) {
	h := &head{header: http.Header{}, length: -1}
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		h.raw = append(h.raw, line...)
		l := bytes.TrimRight(line, "\r\n")
		if len(l) == 0 {
			return h, nil
		}
		if h.first == "" {
			h.first = string(l)
			continue
		}
		name, value, ok := bytes.Cut(l, []byte(":"))
		if !ok {
			return nil, errors.New("bad header")
		}
		k := textproto.CanonicalMIMEHeaderKey(string(name))
		v := string(bytes.TrimSpace(value))
		h.header[k] = append(h.header[k], v)
		switch k {
		case "Content-Length":
			h.length, _ = strconv.ParseInt(v, 10, 64)
		case "Transfer-Encoding":
			h.chunked = v == "chunked"
		}
	}
}

func relay(c, up net.Conn, s *store.Session) {
	cr, cw := bufio.NewReaderSize(c, 16<<10), bufio.NewWriterSize(c, 16<<10)
	ur, uw := bufio.NewReaderSize(up, 16<<10), bufio.NewWriterSize(up, 16<<10)
	for {
		req, err := readHead(cr)
		if err != nil {
			return
		}
		method, rest, _ := bytes.Cut([]byte(req.first), []byte(" "))
		path, _, _ := bytes.Cut(rest, []byte(" "))
		var body []byte
		if req.length > 0 {
			body = make([]byte, req.length)
			if _, err := io.ReadFull(cr, body); err != nil {
				return
			}
		}
		meta := store.HTTPMeta{Method: string(method), Path: string(path), RequestHeader: req.header}
		if len(body) > 0 {
			m := meta
			m.Stream = store.StreamPostBody
			s.Append(store.C2S, time.Now(), body, &m)
		}
		uw.Write(req.raw)
		uw.Write(body)
		if uw.Flush() != nil {
			return
		}
		resp, err := readHead(ur)
		if err != nil {
			return
		}
		status, _ := strconv.Atoi(string(resp.first[9:12]))
		meta.Status, meta.ResponseHeader = status, resp.header
		cw.Write(resp.raw)
		if !resp.chunked {
			b := make([]byte, max(resp.length, 0))
			if _, err := io.ReadFull(ur, b); err != nil {
				return
			}
			cw.Write(b)
			if len(b) > 0 && status != http.StatusAccepted {
				m := meta
				m.Stream = store.StreamJSON
				s.Append(store.S2C, time.Now(), b, &m)
			}
		} else if !relayChunked(ur, cw, s, &meta) {
			return
		}
		if cw.Flush() != nil {
			return
		}
	}
}

// relayChunked forwards a chunked body as read, recording each SSE event.
func relayChunked(ur *bufio.Reader, cw *bufio.Writer, s *store.Session, meta *store.HTTPMeta) bool {
	var pending []byte
	for {
		if ur.Buffered() == 0 && cw.Flush() != nil {
			return false
		}
		line, err := ur.ReadSlice('\n')
		if err != nil {
			return false
		}
		cw.Write(line)
		size, err := strconv.ParseInt(string(bytes.TrimRight(line, "\r\n")), 16, 64)
		if err != nil {
			return false
		}
		data := make([]byte, size+2)
		if _, err := io.ReadFull(ur, data); err != nil {
			return false
		}
		cw.Write(data)
		if size == 0 {
			return true
		}
		pending = append(pending, data[:size]...)
		for {
			i := bytes.Index(pending, []byte("\n\n"))
			if i < 0 {
				break
			}
			event := pending[:i]
			pending = pending[i+2:]
			var msg []byte
			for _, l := range bytes.Split(event, []byte("\n")) {
				if d, ok := bytes.CutPrefix(l, []byte("data:")); ok {
					msg = append(msg, bytes.TrimPrefix(d, []byte(" "))...)
				}
			}
			if len(msg) > 0 {
				m := *meta
				m.Stream = store.StreamPostSSE
				s.Append(store.S2C, time.Now(), msg, &m)
			}
		}
	}
}
