// Package jsonerr tells a user where a JSON file they gave is wrong, and
// how, in their terms: "mcp.json:3:5: invalid character …" for a syntax
// error (the FILE:LINE:COL an editor jumps to), "the file is empty", "the
// file ends early (cut short?)", and for a value of the wrong kind the
// member and what it wanted ("log.entries: want an array, got a
// string"), where encoding/json names Go types a user never sees.
//
// It only rewords errors that encoding/json returned; it never decodes
// anything itself.
package jsonerr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
)

// Error is a JSON error located in a file.
type Error struct {
	Name      string
	Line, Col int // 1-based, the column in bytes; 0 when not known
	Msg       string
	Err       error // as encoding/json (and its caller) returned it
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.Name, e.Line, e.Col, e.Msg)
	}
	return e.Name + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// File locates and rewords the encoding/json error in err, met decoding
// the file name whose content is data. err may wrap that error with
// context ("not a HAR file: %w"), which is kept: the json package's words
// at its end are replaced by the user's. A decoder that streamed the file
// has no data to give: with data nil, File reads name again, as far as
// the error, to find its line. err without a JSON error in it is only
// given the file's name; nil stays nil.
func File(name string, data []byte, err error) error {
	if err == nil {
		return nil
	}
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
		inner  error
		msg    string
		offset int64 // of the byte after the one at fault; 0: none
	)
	switch {
	case errors.As(err, &syntax) && syntax.Error() == "unexpected end of JSON input":
		// json.Unmarshal's word for both: only blanks before the end
		// is an empty file.
		inner, msg = syntax, "the file ends early (cut short?)"
		if data != nil && len(bytes.TrimSpace(data[:min(syntax.Offset, int64(len(data)))])) == 0 {
			msg = "the file is empty"
		}
	case errors.As(err, &syntax):
		inner, msg, offset = syntax, syntax.Error(), syntax.Offset
	case errors.As(err, &typ):
		inner, msg, offset = typ, WrongKind(typ), typ.Offset
	case errors.Is(err, io.ErrUnexpectedEOF): // a Decoder's, cut short
		inner, msg = io.ErrUnexpectedEOF, "the file ends early (cut short?)"
	case errors.Is(err, io.EOF): // a Decoder's, before any value
		inner, msg = io.EOF, "the file is empty"
	default:
		return &Error{Name: name, Msg: err.Error(), Err: err}
	}
	if context, ok := strings.CutSuffix(err.Error(), inner.Error()); ok {
		msg = context + msg
	}
	e := &Error{Name: name, Msg: msg, Err: err}
	if offset > 0 {
		e.Line, e.Col = position(name, data, offset-1)
	}
	return e
}

// position is the line and column of the byte at offset in data, or in
// the file name when data is nil; 0, 0 when the file cannot be read.
func position(name string, data []byte, offset int64) (line, col int) {
	if data == nil {
		f, err := os.Open(name)
		if err != nil {
			return 0, 0
		}
		defer f.Close()
		if data, err = io.ReadAll(io.LimitReader(f, offset+1)); err != nil {
			return 0, 0
		}
	}
	if offset >= int64(len(data)) {
		return 0, 0 // not the file the error came from
	}
	before := data[:offset]
	return bytes.Count(before, []byte("\n")) + 1, int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
}

// WrongKind says which member had a value of the wrong kind, and what it
// wanted, in JSON's words: "log.entries: want an array, got a string";
// with no member (the whole value), only what it wanted and got.
func WrongKind(e *json.UnmarshalTypeError) string {
	got := e.Value
	switch {
	case strings.HasPrefix(got, "number "):
		got = strings.TrimPrefix(got, "number ")
	case got == "bool":
		got = "true or false"
	case got == "array" || got == "object":
		got = "an " + got
	default:
		got = "a " + got
	}
	msg := fmt.Sprintf("want %s, got %s", kindOf(e.Type), got)
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	return msg
}

// kindOf names the JSON a Go type decodes from.
func kindOf(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another value"
}
