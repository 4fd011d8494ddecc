package recorder_test

import (
	"fmt"

	"github.com/mcptape/mcptape/recorder"
)

// WrapHostConfig puts mcpspy record in front of each server a host starts,
// and says what it did with each.
func ExampleWrapHostConfig() {
	// The config keeps its own layout, and its comment: only the
	// server's command and args change.
	config := []byte(`{
  "mcpServers": {
    // files on this machine
    "files": {"command": "npx", "args": ["-y", "server-files"]},
    "remote": {"url": "https://example.com/mcp"}
  }
}
`)
	out, notes, err := recorder.WrapHostConfig(config, recorder.WrapOptions{Mcpspy: "/usr/local/bin/mcpspy", Cassette: "/tmp/host.db"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(out))
	fmt.Println(notes[0].Server+":", notes[0].Note)
	// Output:
	// {
	//   "mcpServers": {
	//     // files on this machine
	//     "files": {"command": "/usr/local/bin/mcpspy", "args": ["record", "-o", "/tmp/host.db", "--session", "files", "--", "npx", "-y", "server-files"]},
	//     "remote": {"url": "https://example.com/mcp"}
	//   }
	// }
	// files: records into /tmp/host.db as session "files"
}
