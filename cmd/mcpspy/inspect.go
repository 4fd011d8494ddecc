package main

import (
	"context"
	"errors"
)

func runInspect(ctx context.Context, args []string, s streams) error {
	return errors.New("inspect: the inspector is not built yet")
}
