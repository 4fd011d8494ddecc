package script

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcptape/mcptape/replay"
)

// roster is one of a session's lists (tools, resources, prompts) as its
// events change it. Each item gets a rank when it arrives: from 0 in
// script order, then counting on through what events add. Events add at
// the end and replace in place, so the list is always in rank order.
//
// A cursor names the last item of its page by rank, and the next page
// starts after that rank, as a keyset cursor does on a real server. So an
// event between two pages skips nothing that was there all along: an item
// removed before the cursor, or the cursor's own item, no longer counts,
// where an offset would shift past one.
type roster[T any] struct {
	items []T
	ranks []int // of items, increasing
	// keys are by rank: the key of every item the list has held, so that
	// a cursor keeps its place once its item is gone.
	keys    []string
	issued  []bool // by rank: a page ending there handed out a cursor
	initial int    // the script's own items, ranks 0 to initial-1
	key     func(T) string
}

func newRoster[T any](items []T, key func(T) string) roster[T] {
	r := roster[T]{key: key}
	for _, it := range items {
		r.push(it)
	}
	r.initial = len(items)
	return r
}

// push adds it at the end with a new rank.
func (r *roster[T]) push(it T) {
	r.items = append(r.items, it)
	r.ranks = append(r.ranks, len(r.keys))
	r.keys = append(r.keys, r.key(it))
	r.issued = append(r.issued, false)
}

// put replaces the item with its key in place, keeping its rank, or
// pushes it when there is none.
func (r *roster[T]) put(it T) {
	k := r.key(it)
	if i := slices.IndexFunc(r.items, func(x T) bool { return r.key(x) == k }); i >= 0 {
		r.items[i] = it
		return
	}
	r.push(it)
}

// remove drops the items with key k.
func (r *roster[T]) remove(k string) {
	items, ranks := r.items[:0], r.ranks[:0]
	for i, it := range r.items {
		if r.key(it) != k {
			items = append(items, it)
			ranks = append(ranks, r.ranks[i])
		}
	}
	clear(r.items[len(items):])
	r.items, r.ranks = items, ranks
}

// Cursors are opaque to clients but plain to us: the list's name, and the
// rank and key of the last item of the page, base64-encoded. The same
// traffic gives the same ranks, so the same cursors.
func cursorFor(kind string, rank int, key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("mcpmock:" + kind + ":" + strconv.Itoa(rank) + ":" + key))
}

func parseCursor(kind, cursor string) (rank int, key string, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, "", false
	}
	rest, ok := strings.CutPrefix(string(b), "mcpmock:"+kind+":")
	if !ok {
		return 0, "", false
	}
	num, key, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, "", false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || strconv.Itoa(n) != num {
		return 0, "", false
	}
	return n, key, true
}

// after is the rank a cursor of this list continues after, if the list
// issued it. One issued in another session counts when any session would
// have issued it: a page end of the script's own list. A client without
// sessions (Streamable HTTP with sessions: false) may page over several
// connections, each a session of its own.
func (r *roster[T]) after(kind, cursor string, size int) (int, bool) {
	rank, key, ok := parseCursor(kind, cursor)
	if !ok || size <= 0 || rank >= len(r.keys) || r.keys[rank] != key {
		return 0, false
	}
	return rank, r.issued[rank] || (rank < r.initial && (rank+1)%size == 0)
}

// list answers a tools/list (resources/list, …) from r, a page of size
// items when size > 0. A page starts after the cursor's rank, whatever has
// been removed since; an item added since is at the end, still to come.
func list[T any](ss *session, c *call, kind string, r *roster[T], def func(T) json.RawMessage) replay.Reply {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	size := ss.s.pageSize
	start := 0
	if raw, ok := c.params["cursor"]; ok && string(raw) != "null" {
		var cur string
		rank, valid := 0, json.Unmarshal(raw, &cur) == nil
		if valid {
			rank, valid = r.after(kind, cur, size)
		}
		if !valid {
			return errReply(codeInvalidParams, fmt.Sprintf("%s: invalid cursor %s", c.req.Method, raw), nil)
		}
		start = len(r.ranks)
		if i := slices.IndexFunc(r.ranks, func(n int) bool { return n > rank }); i >= 0 {
			start = i
		}
	}
	end := len(r.items)
	if size > 0 && start+size < end {
		end = start + size
	}
	page := make([]json.RawMessage, 0, end-start)
	for _, it := range r.items[start:end] {
		page = append(page, def(it))
	}
	res := map[string]any{kind: page}
	if end < len(r.items) {
		last := r.ranks[end-1]
		r.issued[last] = true
		res["nextCursor"] = cursorFor(kind, last, r.keys[last])
	}
	return resultReply(res)
}
