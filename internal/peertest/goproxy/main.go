// Command goproxy is Go's standard reverse proxy (net/http/httputil) in
// front of one upstream, flushing at once, with no recording. Benchmarks
// put it beside mcpspy: what the Go HTTP stack alone costs per round trip,
// so that mcpspy's own share (parsing, recording) can be told apart from
// it. It runs with the same GOMAXPROCS as mcpspy's network proxy.
//
//	goproxy -upstream http://127.0.0.1:PORT
//
// It listens on 127.0.0.1 and prints "goproxy: listening on
// http://HOST:PORT" to stderr when ready; SIGINT or SIGTERM stop it.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

func main() {
	upstream := flag.String("upstream", "", "URL to proxy to")
	flag.Parse()
	u, err := url.Parse(*upstream)
	if err != nil || u.Host == "" {
		log.Fatalf("goproxy: -upstream must be an http URL, got %q", *upstream)
	}
	runtime.GOMAXPROCS(max(1, runtime.NumCPU()/2)) // as mcpspy's network proxy
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.MaxIdleConnsPerHost = 256
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u) },
		Transport:     t,
		FlushInterval: -1, // every write at once, as SSE needs
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatalf("goproxy: %v", err)
	}
	fmt.Fprintf(os.Stderr, "goproxy: listening on http://%s\n", ln.Addr())
	srv := &http.Server{Handler: proxy}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	go func() { <-stop; srv.Close() }()
	_ = srv.Serve(ln)
}
