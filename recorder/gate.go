package recorder

import (
	"net/http"
	"sync"
)

// shutdownGate admits requests to a proxy until it starts stopping, and
// lets Serve wait for the ones it admitted. The zero value is open.
type shutdownGate struct {
	mu      sync.Mutex
	closing bool
	active  sync.WaitGroup
}

// enter admits a request, to be matched by leave; once the gate is
// closing it answers 503 itself and returns false.
func (g *shutdownGate) enter(w http.ResponseWriter) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		http.Error(w, "mcpspy is shutting down", http.StatusServiceUnavailable)
		return false
	}
	g.active.Add(1)
	return true
}

func (g *shutdownGate) leave() { g.active.Done() }

// close refuses what comes next; wait then waits for what was admitted.
func (g *shutdownGate) close() {
	g.mu.Lock()
	g.closing = true
	g.mu.Unlock()
}

func (g *shutdownGate) wait() { g.active.Wait() }

// closed reports whether the proxy is stopping: a session that ends now
// ends because mcpspy was interrupted.
func (g *shutdownGate) closed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closing
}
