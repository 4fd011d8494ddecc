package store_test

import "encoding/json"

func jsonValid(s string) bool { return json.Valid([]byte(s)) }
