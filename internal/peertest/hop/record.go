package hop

import (
	"bufio"
	"io"
	"net/http"
	"time"

	"github.com/mcptape/mcptape/internal/sse"
	"github.com/mcptape/mcptape/store"
)

// RecordRequests reads HTTP/1.1 requests from r, a copy of what a client
// sent, and records each body in s; it sends each request's method on
// methods (closed at the end) for RecordResponses, which needs it to read
// the answer. It returns at the first error, leaving the rest of r unread.
func RecordRequests(r io.Reader, s *store.Session, methods chan<- string) {
	defer close(methods)
	br := bufio.NewReader(r)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		select {
		case methods <- req.Method:
		default: // the response parser has stopped, or is far behind: it guesses
		}
		body, err := io.ReadAll(req.Body)
		if len(body) > 0 {
			s.Append(store.C2S, time.Now(), body, &store.HTTPMeta{Method: req.Method, Path: req.URL.RequestURI(), RequestHeader: req.Header, Stream: store.StreamPostBody})
		}
		if err != nil {
			return
		}
	}
}

// RecordResponses reads the HTTP/1.1 answers in r, a copy of what the
// server sent, and records each JSON body or SSE event in s. It returns at
// the first error, leaving the rest of r unread.
func RecordResponses(r io.Reader, s *store.Session, methods <-chan string) {
	br := bufio.NewReader(r)
	for {
		if _, err := br.Peek(1); err != nil {
			return
		}
		method := http.MethodGet // a response nobody asked for (a 408) has no method
		select {
		case m, ok := <-methods:
			if ok {
				method = m
			}
		default:
		}
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			return
		}
		meta := store.HTTPMeta{Method: method, Status: resp.StatusCode, ResponseHeader: resp.Header, Stream: store.StreamJSON}
		if resp.Header.Get("Content-Type") == "text/event-stream" {
			meta.Stream = store.StreamPostSSE
			err = sse.Messages(resp.Body, 0, func(e sse.Event) {
				m := meta
				m.EventID = e.ID
				s.Append(store.S2C, time.Now(), e.Data, &m)
			})
			if err == io.EOF {
				err = nil
			}
		} else {
			var body []byte
			body, err = io.ReadAll(resp.Body)
			if len(body) > 0 {
				s.Append(store.S2C, time.Now(), body, &meta)
			}
		}
		resp.Body.Close()
		if err != nil {
			return
		}
	}
}
