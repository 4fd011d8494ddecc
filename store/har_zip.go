package store

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Playwright's recordHar, given a path ending .zip, writes the HAR as
// har.har in a zip archive, each body in a file of its own beside it
// (content "attach" is its default there). The import reads such an
// archive where it lies: the HAR from it, the bodies from it.

// harInZip is the name recordHar gives the HAR inside its archive.
const harInZip = "har.har"

// zipMagic opens every zip archive: a local file header's signature.
var zipMagic = []byte("PK\x03\x04")

// isZipPath says whether path is named as a zip archive.
func isZipPath(p string) bool { return strings.EqualFold(filepath.Ext(p), ".zip") }

// LooksLikeZip says whether the first bytes of a file are a zip archive's.
func LooksLikeZip(head []byte) bool { return bytes.HasPrefix(head, zipMagic) }

// ReadHARFile imports the HAR in file: a .har, whose bodies kept in
// files (_file) are read from its directory, or a zip archive of one,
// as recordHar writes for a .zip path, whose bodies are read from the
// archive. opts.Files is set here.
func ReadHARFile(file string, opts HARImportOptions) (*HARImport, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := notADirectory(file); err != nil {
		return nil, err
	}
	head := make([]byte, len(zipMagic))
	n, _ := io.ReadFull(f, head)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if !LooksLikeZip(head[:n]) {
		if isZipPath(file) {
			return nil, fmt.Errorf("%s: not a zip archive (a .zip is read as the archive Playwright's recordHar writes, a HAR in it)", file)
		}
		opts.Files = os.DirFS(filepath.Dir(file))
		return ImportHAR(bufio.NewReader(f), file, opts)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable zip archive: %w", file, err)
	}
	name, err := harOfZip(zr, file)
	if err != nil {
		return nil, err
	}
	har, err := zr.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", file, name, err)
	}
	defer har.Close()
	// Bodies are named relative to the HAR, so read them from its
	// directory in the archive.
	files := fs.FS(zr)
	if dir := path.Dir(name); dir != "." {
		if files, err = fs.Sub(zr, dir); err != nil {
			return nil, err
		}
	}
	opts.Files = files
	return ImportHAR(bufio.NewReader(har), file+": "+name, opts)
}

// harOfZip names the HAR in an archive: har.har, as recordHar names it,
// else the one file ending .har.
func harOfZip(zr *zip.Reader, where string) (string, error) {
	var hars []string
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || !strings.EqualFold(path.Ext(f.Name), ".har") {
			continue
		}
		if f.Name == harInZip {
			return f.Name, nil
		}
		hars = append(hars, f.Name)
	}
	switch len(hars) {
	case 1:
		return hars[0], nil
	case 0:
		return "", fmt.Errorf("%s: no .har in the zip archive (Playwright's recordHar keeps its HAR there as %s)", where, harInZip)
	}
	sort.Strings(hars)
	return "", fmt.Errorf("%s: %d HARs in the zip archive (%s): unzip it and import one", where, len(hars), strings.Join(hars, ", "))
}
