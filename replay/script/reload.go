package script

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/replay"
)

// Reloadable is a script file that can be loaded again while it is served
// (mcpmock serve --watch), so that editing a fake needs no restart.
// Sessions opened after a reload get the new script; a session already
// open keeps the one it started with, call counts and fired events and
// all, as a server that was redeployed would. A version that does not load
// is refused and the last good one goes on serving.
//
// Mcp-Param-* header checks remember a tool's schema from the first
// request that names it: a reload that changes x-mcp-header fields is seen
// there only by a new mcpmock.
type Reloadable struct {
	path string
	cur  atomic.Pointer[Script]

	mu    sync.Mutex // guards stamp, and makes reloads one at a time
	stamp fileStamp  // of the last version read, loaded or refused
}

// fileStamp tells a changed file without reading it.
type fileStamp struct {
	size    int64
	modTime time.Time
}

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{fi.Size(), fi.ModTime()}, nil
}

// LoadReloadable loads the script at path, to be reloaded later.
func LoadReloadable(path string) (*Reloadable, error) {
	stamp, err := stampOf(path)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	s, err := loadFile(path)
	if err != nil {
		return nil, err
	}
	r := &Reloadable{path: path, stamp: stamp}
	r.cur.Store(s)
	return r, nil
}

// ReloadIfChanged loads the file again if its size or modification time
// changed since it was last read. changed says whether it was read; err,
// why the new version was refused (the last good one still serves). A
// version is read once, whatever came of it: a broken file is reported
// once, not at every look.
func (r *Reloadable) ReloadIfChanged() (changed bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	stamp, err := stampOf(r.path)
	if err != nil {
		if r.stamp == (fileStamp{}) {
			return false, nil // still gone: said already
		}
		r.stamp = fileStamp{}
		return true, fmt.Errorf("read script: %w", err)
	}
	if stamp == r.stamp {
		return false, nil
	}
	r.stamp = stamp
	s, err := loadFile(r.path)
	if err != nil {
		return true, err
	}
	r.cur.Store(s)
	return true, nil
}

// Name implements replay.Source.
func (r *Reloadable) Name() string { return r.cur.Load().Name() }

// Unused implements replay.Source: a script has no recorded interactions.
func (r *Reloadable) Unused() []string { return nil }

// Whole is Script.Whole of the version serving now.
func (r *Reloadable) Whole() bool { return r.cur.Load().Whole() }

// InputSchema is Script.InputSchema of the version serving now.
func (r *Reloadable) InputSchema(tool string) (json.RawMessage, bool) {
	return r.cur.Load().InputSchema(tool)
}

// HTTPSessions is Script.HTTPSessions of the version serving now.
func (r *Reloadable) HTTPSessions() (issue, said bool) { return r.cur.Load().HTTPSessions() }

// Open implements replay.Source with the version serving now.
func (r *Reloadable) Open() replay.SessionSource { return r.cur.Load().Open() }
