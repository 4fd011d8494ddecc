package store

import (
	"errors"
	"fmt"
	"io"
	"os"

	bolt "go.etcd.io/bbolt"
)

// Salvage reads around a loop of page pointers. bbolt would follow one
// for ever, so checkTree refuses it; Salvage instead works on a private
// copy of the file in which each looping pointer is cut: pointed at
// detourPage, a page so far past any file that bbolt's read of it is an
// index panic, which guard recovers like any damage. What lay below the
// pointer is then lost, as under a zeroed page, and the rest is read.

// detourPage is the page a cut pointer points at. bbolt reads page n at
// offset n × page size of an array of 2^48 bytes: this is past its end
// for any page size.
const detourPage = 1 << 40

// maxDetours bounds the loops cut in one file; past it, the file is
// refused.
const maxDetours = 64

// PageDetour is a loop of page pointers that Salvage read around.
type PageDetour struct {
	Page, Element uint64 // the pointer cut: element Element of page Page
	LoopsTo       uint64 // the page the loop returns to
}

func (d PageDetour) String() string {
	return fmt.Sprintf("element %d of page %d is in a loop of page pointers back to page %d; salvaged around it", d.Element, d.Page, d.LoopsTo)
}

// detourLoops returns the file Salvage should read for path, given as
// src (path itself, or a private copy of it): src itself when its tree
// has no loop, else a copy with every loop cut, which cleanup removes (a
// private copy given is cut in place).
func detourLoops(src, path string) (_ string, detours []PageDetour, cleanup func(), err error) {
	cleanup = func() {}
	for {
		loop, err := findLoop(src, path)
		if err != nil {
			cleanup()
			return "", nil, func() {}, err
		}
		if loop == nil {
			return src, detours, cleanup, nil
		}
		if len(detours) == maxDetours {
			cleanup()
			return "", nil, func() {}, fmt.Errorf("%s: %w: more than %d page pointers loop", path, ErrCorrupt, maxDetours)
		}
		if src == path {
			if src, err = privateCopy(path); err != nil {
				return "", nil, cleanup, fmt.Errorf("salvage %s: %w", path, err)
			}
			copyPath := src
			cleanup = func() { os.Remove(copyPath) }
		}
		if err := cutPointer(src, loop); err != nil {
			cleanup()
			return "", nil, func() {}, fmt.Errorf("salvage %s: %w", path, err)
		}
		detours = append(detours, PageDetour{Page: loop.from, Element: loop.elem, LoopsTo: loop.to})
	}
}

// findLoop walks src's tree as Salvage will read it, naming errors after
// path: nil when no pointer loops.
func findLoop(src, path string) (*pageLoop, error) {
	db, file, err := openDBFile(src, false)
	if err != nil {
		return nil, renamed(err, src, path)
	}
	defer db.Close()
	err = guard(path, func() error {
		return db.View(func(tx *bolt.Tx) error { return checkTree(path, file, tx, true) })
	})
	var loop *pageLoop
	if errors.As(err, &loop) {
		return loop, nil
	}
	return nil, err
}

// renamed is err with src, a private copy, named as path, the file the
// user gave.
func renamed(err error, src, path string) error {
	if src == path || err == nil {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// privateCopy copies path to a new temporary file, readable by its owner
// only, as the cassette is.
func privateCopy(path string) (string, error) {
	in, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.CreateTemp("", "mcptape-salvage-*.db")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out.Name())
		return "", err
	}
	return out.Name(), nil
}

// cutPointer points the looping pointer of loop, in the file at src, at
// detourPage.
func cutPointer(src string, loop *pageLoop) error {
	f, err := os.OpenFile(src, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	var b [8]byte
	native.PutUint64(b[:], detourPage)
	_, err = f.WriteAt(b[:], int64(loop.from*loop.pageSize+pageHeaderSize+loop.elem*pageElementSize+8))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
