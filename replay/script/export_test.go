package script

// The helpers of this package's tests that its black-box tests (package
// script_test, which serve scripts to go-sdk clients) share, so neither
// keeps a copy.
var (
	TapeOf    = tapeOf
	ScriptHas = scriptHas
)
