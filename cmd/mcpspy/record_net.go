package main

import (
	"context"
	"errors"

	"github.com/mcptape/mcptape/store"
)

// recordNet records an HTTP or WebSocket upstream (o.upstream) behind a
// listener on o.listen until ctx ends.
func recordNet(ctx context.Context, s streams, o *recordOptions, w *store.Writer) error {
	return errors.New("record --upstream: HTTP and WebSocket recording are not built yet")
}
