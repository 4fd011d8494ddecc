package replay

import "time"

// SetClock gives the server's HTTP session expiry a test clock.
func SetClock(s *Server, now func() time.Time) {
	s.http.mu.Lock()
	s.http.now = now
	s.http.mu.Unlock()
}

// HTTPSessions counts the HTTP sessions the server holds.
func HTTPSessions(s *Server) int {
	s.http.mu.Lock()
	defer s.http.mu.Unlock()
	return len(s.http.sessions) + len(s.http.legacy) + len(s.http.conns)
}
