package jsonrpc

// LogLevels are the severities of logging/setLevel and
// notifications/message, least severe first (the syslog levels of
// RFC 5424, as MCP names them). lint checks them, and mcpmock's scripts
// and cassettes answer logging/setLevel with them.
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
