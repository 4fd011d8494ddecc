package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/script"
)

// watchEvery is how often --watch looks at the scripts: a stat per script,
// so cheap; often enough that a test run started after saving sees it.
const watchEvery = 200 * time.Millisecond

// watchScripts is --watch: it reloads each script when its file changes,
// until the returned stop is called, and says on stderr what came of it.
func watchScripts(s streams, srv *replay.Server, scripts []*script.Reloadable) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(watchEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			var said []string
			reloaded := false
			for _, sc := range scripts {
				switch changed, err := sc.ReloadIfChanged(); {
				case err != nil:
					said = append(said, fmt.Sprintf("mcpmock: %v; the last version that loaded goes on serving", err))
				case changed:
					reloaded = true
					said = append(said, fmt.Sprintf("mcpmock: reloaded %s: new sessions get it", sc.Name()))
				}
			}
			if reloaded {
				// A 2026-07-28 client has no session to end: its next
				// request is to see the new version. Before the line that
				// says so, which scripts and tests wait for.
				srv.RestartSessionless()
			}
			for _, line := range said {
				fmt.Fprintln(s.Err, line)
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}
