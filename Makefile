# mcptape's everyday commands. CI runs .ci/run, which calls the same test
# command as the README.

GO ?= go
NPM_DIR := testdata/npm
EVERYTHING := node $(NPM_DIR)/node_modules/@modelcontextprotocol/server-everything/dist/index.js

.PHONY: all build test race bench fuzz cassettes peers clean

all: build test

build:
	$(GO) build -o bin/ ./cmd/...

peers: $(NPM_DIR)/node_modules/.package-lock.json

$(NPM_DIR)/node_modules/.package-lock.json: $(NPM_DIR)/package-lock.json
	npm ci --prefix $(NPM_DIR) --no-audit --no-fund

test: peers
	$(GO) test ./...

race: peers
	$(GO) test -race ./...

# Benchmarks: every target in the issues, each a ratio measured side by
# side in one run; docs/BENCHMARKS.md is regenerated from the output.
bench: peers
	$(GO) run ./internal/benchreport -o docs/BENCHMARKS.md

# Every fuzz target for FUZZTIME each (CI gives each 6s).
FUZZTIME ?= 1m
fuzz:
	FUZZTIME=$(FUZZTIME) bash .ci/fuzz

# Re-record the shipped cassettes from the real reference server.
cassettes: build peers
	rm -f cassettes/everything-stdio.db cassettes/everything-stdio.jsonl
	node $(NPM_DIR)/stdio-everything.mjs bin/mcpspy record -o cassettes/everything-stdio.db --session everything -- $(EVERYTHING) stdio > /dev/null
	bin/mcpspy export -o cassettes/everything-stdio.jsonl cassettes/everything-stdio.db
	sh testdata/record-http-cassette.sh

clean:
	rm -rf bin
