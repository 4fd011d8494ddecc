package store

import (
	"errors"
	"fmt"
	"testing"
)

// NoSession says what the file holds, and which name was meant when the
// one given is close to one; it stays an ErrNoSession.
func TestNoSession(t *testing.T) {
	named := []SessionInfo{{ID: "s1", Name: "everything"}, {ID: "s2"}}
	var many []SessionInfo
	for i := range 7 {
		many = append(many, SessionInfo{ID: fmt.Sprintf("s%d", i+1)})
	}
	tests := []struct {
		name, given string
		all         []SessionInfo
		want        string
	}{
		{"near a name", "everthing", named, `a.db: no such session "everthing" (it holds 2 sessions: s1 "everything", s2); did you mean everything?`},
		{"an id is not guessed", "s3", named, `a.db: no such session "s3" (it holds 2 sessions: s1 "everything", s2)`},
		{"one session", "x", named[:1], `a.db: no such session "x" (it holds s1 "everything")`},
		{"many, the first few listed", "s9", many, `a.db: no such session "s9" (it holds 7 sessions: s1, s2, s3, s4, s5, and 2 more)`},
		{"none", "s1", nil, `a.db: no such session "s1" (it holds none)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := NoSession("a.db", tt.given, tt.all)
			if err.Error() != tt.want || !errors.Is(err, ErrNoSession) {
				t.Errorf("NoSession = %q (is ErrNoSession: %v)\nwant %q", err, errors.Is(err, ErrNoSession), tt.want)
			}
		})
	}
}
