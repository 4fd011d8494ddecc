package lint

import (
	"os"
	"regexp"
	"testing"
)

// docs/LINT.md documents every rule, once, with the severity it has.
func TestRules_Documented(t *testing.T) {
	doc, err := os.ReadFile("../docs/LINT.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| (info|warning|error) \\|").FindAllSubmatch(doc, -1)
	documented := map[string]string{}
	for _, r := range rows {
		name := string(r[1])
		if _, twice := documented[name]; twice {
			t.Errorf("docs/LINT.md lists %s twice", name)
		}
		documented[name] = string(r[2])
	}
	for _, r := range Rules() {
		if sev, ok := documented[r.Name]; !ok {
			t.Errorf("docs/LINT.md does not list rule %s", r.Name)
		} else if sev != r.Severity.String() {
			t.Errorf("docs/LINT.md gives %s severity %s, the code %s", r.Name, sev, r.Severity)
		}
		delete(documented, r.Name)
	}
	for name := range documented {
		t.Errorf("docs/LINT.md lists %s, which is no rule", name)
	}
}
