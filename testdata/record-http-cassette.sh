#!/bin/sh
# Records cassettes/everything-http.db and its JSONL twin: the TypeScript
# SDK client over Streamable HTTP to server-everything, through mcpspy.
# Run by `make cassettes` after `make build peers`. Everything listens on
# 127.0.0.1 and is stopped before the script ends.
set -eu
npm=$(pwd)/testdata/npm
out=cassettes/everything-http
work=$(mktemp -d)
server_pid= spy_pid=
cleanup() {
	[ -n "$spy_pid" ] && kill "$spy_pid" 2>/dev/null || true
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

# wait_line FILE PREFIX: the rest of the first line of FILE that starts with PREFIX.
wait_line() {
	for _ in $(seq 300); do
		line=$(grep -m1 "^$2" "$1" 2>/dev/null || true)
		if [ -n "$line" ]; then
			echo "${line#"$2"}"
			return 0
		fi
		sleep 0.1
	done
	echo "record-http-cassette: no \"$2\" line in $1:" >&2
	cat "$1" >&2
	return 1
}

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
PORT=$port node --require "$npm/loopback.cjs" "$npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp >"$work/server.log" 2>&1 &
server_pid=$!
wait_line "$work/server.log" "MCP Streamable HTTP Server listening on port" >/dev/null

rm -f "$out.db" "$out.jsonl" "$out.har"
bin/mcpspy record -o "$out.db" --session everything-http --upstream "http://127.0.0.1:$port/mcp" 2>"$work/spy.log" &
spy_pid=$!
url=$(wait_line "$work/spy.log" "mcpspy: listening on ")
(cd "$npm" && node http-client.mjs streamable "$url/mcp" echo '{"message":"hello from mcptape"}' trigger-long-running-operation '{"duration":0.3,"steps":3}')
kill -INT "$spy_pid"
wait "$spy_pid"
spy_pid=
bin/mcpspy export -o "$out.jsonl" "$out.db"
bin/mcpspy export --har -o "$out.har" "$out.db"
