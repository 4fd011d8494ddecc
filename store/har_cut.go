package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mcptape/mcptape/internal/jsonerr"
	"github.com/mcptape/mcptape/internal/plural"
)

// harCut is the error for a HAR that ends before its last brace (a save
// or a download that was interrupted), named name, whose text was
// partial: where it ends, as FILE:LINE:COL, and how far into log.entries
// it got, so that whoever sent it knows how much is missing.
func harCut(name string, partial []byte) error {
	line := bytes.Count(partial, []byte("\n")) + 1
	col := len(partial) - (bytes.LastIndexByte(partial, '\n') + 1) + 1
	msg := "the HAR ends early (cut short?)"
	switch whole, state := harEntriesBeforeCut(partial); state {
	case cutBeforeEntries:
		msg += ", before log.entries"
	case cutInEntries:
		msg += fmt.Sprintf(" in entry %d of log.entries", whole+1)
		switch whole {
		case 0:
		case 1:
			msg += "; the one before it is whole"
		default:
			msg += fmt.Sprintf("; the %d before it are whole", whole)
		}
	case cutAfterEntries:
		msg += fmt.Sprintf(", after log.entries (%s, all whole)", plural.Count(whole, "entry"))
	}
	return &jsonerr.Error{Name: name, Line: line, Col: col, Msg: msg, Err: io.ErrUnexpectedEOF}
}

// Where in a HAR its text ends, for harEntriesBeforeCut.
const (
	cutBeforeEntries = iota
	cutInEntries
	cutAfterEntries
)

// harEntriesBeforeCut walks the text of a HAR that ends early, as far as
// it goes, and says how many entries of log.entries it holds whole and
// whether it ends before, in or after that array. It decodes one entry
// at a time into raw bytes, never the whole log.
func harEntriesBeforeCut(partial []byte) (whole, state int) {
	dec := json.NewDecoder(bytes.NewReader(partial))
	state = cutBeforeEntries
	// walkObject calls member with dec at each member's value; false
	// from member, or text that ends or is not an object, stops the walk.
	walkObject := func(member func(key string) bool) bool {
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return false
		}
		for dec.More() {
			tok, err := dec.Token()
			key, ok := tok.(string)
			if err != nil || !ok || !member(key) {
				return false
			}
		}
		_, err := dec.Token()
		return err == nil
	}
	skip := func() bool {
		var v json.RawMessage
		return dec.Decode(&v) == nil
	}
	walkObject(func(key string) bool {
		if key != "log" {
			return skip()
		}
		return walkObject(func(key string) bool {
			if key != "entries" {
				return skip()
			}
			if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
				return false
			}
			state = cutInEntries
			for dec.More() {
				if !skip() {
					return false
				}
				whole++
			}
			if _, err := dec.Token(); err != nil {
				return false
			}
			state = cutAfterEntries
			return true
		})
	})
	return whole, state
}
