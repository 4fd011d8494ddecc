// Package atomicfile writes files a user keeps (cassettes, exports,
// reports) so that a failure never leaves half of one: the content goes to
// a temporary file beside the target, is synced, and is renamed over it.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write creates path with the given mode from what fill writes into f.
// fill must not close f. Other processes may write the temporary file by
// its name meanwhile (f.Name()); Sync covers what they wrote too.
func Write(path string, mode os.FileMode, fill func(f *os.File) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = fill(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
