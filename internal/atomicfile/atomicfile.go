//go:build !windows

// Package atomicfile writes files a user keeps (cassettes, exports,
// reports) so that a failure never leaves half of one: the content goes to
// a temporary file beside the target, is synced, and is renamed over it.
//
// Its errors name the target, never the temporary file: the user gave the
// one, has never heard of the other, and it is gone once Write fails.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Write creates or replaces path with what fill writes into f. A new
// file gets mode; one that exists keeps its permission bits, which its
// owner chose. fill must not close f. Other processes may write the
// temporary file by its name meanwhile (f.Name()); Sync covers what they
// wrote too. An error of fill's that names f.Name() names path instead.
// A character device or a named pipe (/dev/null, /dev/stdout, a FIFO) is
// no file to replace: it is written directly, as a shell's > writes it,
// and fill gets it opened for writing (see Direct). Any other existing
// path that is not a regular file (a directory, a block device, a
// socket), or that the caller may not write, is refused before fill runs.
// A symbolic link is written through: the file it points to is replaced,
// and the link stays.
func Write(path string, mode os.FileMode, fill func(f *os.File) error) (err error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist): // a new file
	case err != nil:
		return fmt.Errorf("write %s: %w", path, pathless(err))
	case direct(st.Mode()):
		return writeDirect(path, fill)
	default:
		// A rename would put a file where a directory, a pipe or a device
		// was, or fail with a reason that does not say so ("file exists").
		if !st.Mode().IsRegular() {
			return fmt.Errorf("write %s: cannot replace it (a %s, not a file)", path, FileKind(st.Mode()))
		}
		if err := writable(path, st.Mode().Perm()); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		mode = st.Mode().Perm()
	}
	// A rename over a symbolic link would replace the link; the file it
	// points to is the one to write, and the temporary file goes beside
	// that one, as a rename cannot cross file systems.
	target, err := followLinks(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, pathless(err))
	}
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: create a file in %s: %w", path, filepath.Dir(target), pathless(err))
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			if strings.Contains(err.Error(), f.Name()) {
				err = &tempNamed{err: err, tmp: f.Name(), path: path}
			}
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
	if err = os.Rename(f.Name(), target); err != nil {
		return fmt.Errorf("write %s: %w", path, pathless(err))
	}
	return nil
}

// Direct says whether Write writes path directly rather than through a
// temporary file: a character device or a named pipe, which a rename
// would replace rather than write. What fill gets is then no file a
// caller can reopen by its name and seek in (a bbolt cassette needs one):
// such a caller builds in a file of its own and copies that out.
func Direct(path string) bool {
	st, err := os.Stat(path)
	return err == nil && direct(st.Mode())
}

// direct says whether a file of mode m is written directly. Not a block
// device: writing a disk is no way to check an export.
func direct(m fs.FileMode) bool {
	return m&fs.ModeCharDevice != 0 || m&fs.ModeNamedPipe != 0
}

// writeDirect is Write to a character device or a named pipe. A pipe
// blocks the open until a reader comes, as it does a shell's >. Nothing
// is synced: a device or a pipe keeps nothing to sync, and fsync of one
// fails (EINVAL) though the write succeeded.
func writeDirect(path string, fill func(f *os.File) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, pathless(err))
	}
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, pathless(err))
	}
	return nil
}

// followLinks is the path that symbolic links at path lead to, whether
// the file there exists or not (a link may point to a file yet to be
// written). Links in the directories above the last name need no
// following: a rename goes through them.
func followLinks(path string) (string, error) {
	for range 40 { // Linux's MAXSYMLINKS
		st, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) || err == nil && st.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			// The kernel reads "../" from where the link really is,
			// which Join alone would not, past a linked directory.
			dir, err := filepath.EvalSymlinks(filepath.Dir(path))
			if err != nil {
				return "", err
			}
			link = filepath.Join(dir, link)
		}
		path = link
	}
	return "", unix.ELOOP
}

// writable refuses a file the caller may not write. The rename that
// replaces it asks only the directory, so the file's own permission is
// checked here: access(2) for the caller's rights, and the mode bits
// besides, since access(2) lets root write anything. A file no one may
// write was made read-only on purpose; root keeps it so too, as rm asks
// root before removing one.
func writable(path string, perm fs.FileMode) error {
	if perm&0o222 == 0 {
		return fmt.Errorf("%w (read-only, mode %#o)", fs.ErrPermission, perm)
	}
	return unix.Access(path, unix.W_OK)
}

// FileKind names what a path that is not a regular file is ("directory",
// "named pipe", …), for an error that says why it was not written or read
// as one; the store says it of a cassette path too.
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// pathless is the reason of an error about the temporary file's name (its
// pattern, or it and path), without the name.
func pathless(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// tempNamed is an error whose message named the temporary file, told
// with path in its place; errors.Is and As see the original.
type tempNamed struct {
	err       error
	tmp, path string
}

func (e *tempNamed) Error() string { return strings.ReplaceAll(e.err.Error(), e.tmp, e.path) }
func (e *tempNamed) Unwrap() error { return e.err }
