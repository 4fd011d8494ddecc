package script

// The script format, as decoded from YAML or JSON. docs/SCRIPTS.md is the
// user's description of these types and docs/script.schema.json the
// editor's; keep the three in step.

// File is a whole script.
type File struct {
	Pos
	// Server makes the script a whole server: it answers initialize and
	// server/discover, and every tools/list. Without it the script is an
	// override layered over a cassette and answers only the tools,
	// resources and prompts it names.
	Server    *Server    `yaml:"server"`
	Tools     []Tool     `yaml:"tools"`
	Resources []Resource `yaml:"resources"`
	Prompts   []Prompt   `yaml:"prompts"`
	// ResourceTemplates are listed by resources/templates/list; their
	// variables can be completed (completion/complete), not read.
	ResourceTemplates []ResourceTemplate `yaml:"resourceTemplates"`
	Events            []Event            `yaml:"events"`
}

// Server is the server's identity and behaviour.
type Server struct {
	Pos
	Name         string   `yaml:"name"`
	Title        string   `yaml:"title"`
	Version      string   `yaml:"version"`
	Instructions string   `yaml:"instructions"`
	Icons        Value    `yaml:"icons"`
	WebsiteURL   string   `yaml:"websiteUrl"`
	Protocols    []string `yaml:"protocolVersions"`
	// Capabilities replaces the capabilities derived from the script.
	Capabilities Value `yaml:"capabilities"`
	// PageSize is the page size of every list; 0 means one page.
	PageSize int `yaml:"pageSize"`
	// InvalidArguments is "isError" (the default, 2025-11-25 behaviour) or
	// "error" (a -32602 JSON-RPC error).
	InvalidArguments string `yaml:"invalidArguments"`
	// Sessions false serves Streamable HTTP as a server without sessions
	// does: no Mcp-Session-Id, GET and DELETE refused with 405. nil:
	// with sessions, unless a recording layered under shows none.
	Sessions *bool `yaml:"sessions"`
}

// Tool is one tool, with every field of the newest spec, and its answers.
type Tool struct {
	Pos
	Name         string `yaml:"name"`
	Title        string `yaml:"title"`
	Description  string `yaml:"description"`
	InputSchema  Value  `yaml:"inputSchema"`
	OutputSchema Value  `yaml:"outputSchema"`
	Annotations  Value  `yaml:"annotations"`
	Icons        Value  `yaml:"icons"`
	Execution    Value  `yaml:"execution"`
	Meta         Value  `yaml:"_meta"`
	// InvalidArguments overrides Server.InvalidArguments for this tool.
	InvalidArguments string `yaml:"invalidArguments"`
	// Elicit asks the client's user for input before an answer is chosen.
	Elicit *Elicit `yaml:"elicit"`
	// Sample asks the client's model for a completion, and Roots asks the
	// client for its roots, before an answer is chosen (after Elicit).
	Sample *Sample `yaml:"sample"`
	Roots  bool    `yaml:"roots"`
	// Answers are tried in order; the first whose When matches is used.
	Answers []Answer `yaml:"answers"`
	// Sequence answers the first call with Sequence[0], the second with
	// Sequence[1], and repeats the last one after that.
	Sequence []Answer `yaml:"sequence"`
}

// Answer is one way to answer a tools/call.
type Answer struct {
	Pos
	When *When `yaml:"when"`
	// Text is a shorthand for one text content block; it is a template.
	Text              string    `yaml:"text"`
	Content           []Value   `yaml:"content"`
	StructuredContent Value     `yaml:"structuredContent"`
	IsError           bool      `yaml:"isError"`
	Meta              Value     `yaml:"_meta"`
	Error             *RPCError `yaml:"error"`
	Delay             Duration  `yaml:"delay"`
	Progress          []Step    `yaml:"progress"`
	Log               []Log     `yaml:"log"`
	// Fault is "hang", "close", "malformed", "duplicate", "wrong-id",
	// "expire-session", or "http-" and a 4xx or 5xx status ("http-503").
	Fault string `yaml:"fault"`
	// Headers go with a fault http-NNN or expire-session: HTTP response
	// headers sent with the status (Retry-After, WWW-Authenticate).
	Headers Headers `yaml:"headers"`
	// Body goes with them too: the body sent with the status instead of
	// mcpmock's line of text, a string as text/plain and any other value
	// as its JSON (application/json), unless Headers name a Content-Type.
	Body Value `yaml:"body"`
}

// Headers are HTTP headers, each name with one value or a list of them,
// in the order written.
type Headers struct {
	Pos
	List []Header
}

// Header is one header name and its values; Pos is the name's.
type Header struct {
	Pos
	Name   string
	Values []string
}

// When says which arguments an answer is for. Exact and Subset exclude
// each other; Regex may join either. Elicited and Sampled match the
// client's replies to the tool's Elicit and Sample (as subsets), with or
// without the others.
type When struct {
	Pos
	Exact    Value             `yaml:"exact"`
	Subset   Value             `yaml:"subset"`
	Regex    map[string]string `yaml:"regex"`
	Elicited Value             `yaml:"elicited"`
	Sampled  Value             `yaml:"sampled"`
}

// Elicit is an elicitation form the tool puts to the client (the user)
// before it answers: an elicitation/create request in the handshake era,
// an input_required result the client retries in 2026-07-28.
type Elicit struct {
	Pos
	// Mode is "form" (the default) or "url": send the user to URL, out of
	// band (2025-11-25), rather than ask for RequestedSchema's fields.
	Mode string `yaml:"mode"`
	// URL is a template, over the call's arguments; url mode only.
	URL string `yaml:"url"`
	// Complete, in url mode, sends notifications/elicitation/complete
	// once the user has accepted, before the answer: as a server does
	// when the user has finished on the page. Handshake era only:
	// 2026-07-28 has no such notification.
	Complete bool `yaml:"complete"`
	// Message is a template, over the call's arguments.
	Message string `yaml:"message"`
	// RequestedSchema is the form: an object schema of flat string,
	// number, integer, boolean and enum properties.
	RequestedSchema Value `yaml:"requestedSchema"`
	// Task asks a client that takes them to run the elicitation as a
	// task of its own: true, or {ttl: milliseconds} (clienttask.go).
	Task Value `yaml:"task"`
}

// Sample is a sampling/createMessage request the tool sends the client
// (its model) before it answers, as an Elicit is sent.
type Sample struct {
	Pos
	// Messages are the conversation; their text is a template over the
	// call's arguments.
	Messages []PromptMsg `yaml:"messages"`
	// SystemPrompt is a template, over the call's arguments.
	SystemPrompt string `yaml:"systemPrompt"`
	// MaxTokens is required, as the spec requires it.
	MaxTokens        int      `yaml:"maxTokens"`
	Temperature      Value    `yaml:"temperature"`
	StopSequences    []string `yaml:"stopSequences"`
	ModelPreferences Value    `yaml:"modelPreferences"`
	// IncludeContext is none, thisServer or allServers.
	IncludeContext string `yaml:"includeContext"`
	Meta           Value  `yaml:"_meta"`
	// Task asks a client that takes them to run the sampling as a task
	// of its own, as Elicit.Task.
	Task Value `yaml:"task"`
}

// RPCError is a JSON-RPC error answer.
type RPCError struct {
	Pos
	Code    int    `yaml:"code"`
	Message string `yaml:"message"`
	Data    Value  `yaml:"data"`
}

// Step is one progress notification, sent after its delay.
type Step struct {
	Pos
	Progress float64  `yaml:"progress"`
	Total    float64  `yaml:"total"`
	Message  string   `yaml:"message"`
	Delay    Duration `yaml:"delay"`
}

// Log is one notifications/message.
type Log struct {
	Pos
	Level  string `yaml:"level"`
	Logger string `yaml:"logger"`
	Data   Value  `yaml:"data"`
}

// Resource is one resource and its contents.
type Resource struct {
	Pos
	URI         string `yaml:"uri"`
	Name        string `yaml:"name"`
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
	MimeType    string `yaml:"mimeType"`
	Annotations Value  `yaml:"annotations"`
	Icons       Value  `yaml:"icons"`
	Meta        Value  `yaml:"_meta"`
	// Text or Blob are the contents, as written (no template), unless
	// Answers choose them.
	Text string `yaml:"text"`
	Blob string `yaml:"blob"`
	// Elicit, Sample and Roots ask the client first, as a tool's do.
	Elicit *Elicit `yaml:"elicit"`
	Sample *Sample `yaml:"sample"`
	Roots  bool    `yaml:"roots"`
	// Answers are tried in order, as a tool's are; the first whose When
	// matches the replies is read.
	Answers []ResourceAnswer `yaml:"answers"`
}

// ResourceAnswer is one way to answer a resources/read: Text (a
// template), Blob, or Error.
type ResourceAnswer struct {
	Pos
	When  *When     `yaml:"when"`
	Text  string    `yaml:"text"`
	Blob  string    `yaml:"blob"`
	Error *RPCError `yaml:"error"`
}

// Prompt is one prompt and the messages prompts/get returns.
type Prompt struct {
	Pos
	Name        string      `yaml:"name"`
	Title       string      `yaml:"title"`
	Description string      `yaml:"description"`
	Arguments   []PromptArg `yaml:"arguments"`
	Icons       Value       `yaml:"icons"`
	Meta        Value       `yaml:"_meta"`
	// Messages are what prompts/get returns, unless Answers choose them.
	Messages []PromptMsg `yaml:"messages"`
	// Elicit, Sample and Roots ask the client first, as a tool's do.
	Elicit *Elicit `yaml:"elicit"`
	Sample *Sample `yaml:"sample"`
	Roots  bool    `yaml:"roots"`
	// Answers are tried in order, as a tool's are; the first whose When
	// matches the arguments and replies is returned.
	Answers []PromptAnswer `yaml:"answers"`
}

// PromptAnswer is one way to answer a prompts/get: Messages, or Error.
type PromptAnswer struct {
	Pos
	When     *When       `yaml:"when"`
	Messages []PromptMsg `yaml:"messages"`
	Error    *RPCError   `yaml:"error"`
}

// PromptArg is one argument of a prompt.
type PromptArg struct {
	Pos
	Name        string `yaml:"name"`
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
	Required    bool   `yaml:"required"`
	// Complete answers completion/complete for this argument.
	Complete *Complete `yaml:"complete"`
}

// Complete is how completion/complete answers for one prompt argument or
// resource template variable: Values filtered by the prefix the client
// typed, unless one of Answers matches first.
type Complete struct {
	Pos
	Values  []string         `yaml:"values"`
	Answers []CompleteAnswer `yaml:"answers"`
}

// CompleteAnswer is an explicit completion: its When matches the
// arguments as prompts/get would get them (the request's context
// arguments, and the one being completed at the value typed so far).
// Values are sent as written, not filtered.
type CompleteAnswer struct {
	Pos
	When   *When    `yaml:"when"`
	Values []string `yaml:"values"`
	// Total is the number of values there are in all; default, as many
	// as Values holds.
	Total   *int      `yaml:"total"`
	HasMore bool      `yaml:"hasMore"`
	Error   *RPCError `yaml:"error"`
}

// ResourceTemplate is one resource template (RFC 6570 uriTemplate), as
// resources/templates/list lists it, and the completions of its
// variables.
type ResourceTemplate struct {
	Pos
	URITemplate string              `yaml:"uriTemplate"`
	Name        string              `yaml:"name"`
	Title       string              `yaml:"title"`
	Description string              `yaml:"description"`
	MimeType    string              `yaml:"mimeType"`
	Annotations Value               `yaml:"annotations"`
	Icons       Value               `yaml:"icons"`
	Meta        Value               `yaml:"_meta"`
	Complete    map[string]Complete `yaml:"complete"`
}

// PromptMsg is one message of a prompt; Text is a template over the
// prompt's arguments.
type PromptMsg struct {
	Pos
	Role    string `yaml:"role"`
	Text    string `yaml:"text"`
	Content Value  `yaml:"content"`
}

// Event changes the server once, after a number of calls of one tool or a
// number of requests of any kind.
type Event struct {
	Pos
	After           Trigger    `yaml:"after"`
	AddTools        []Tool     `yaml:"addTools"`
	RemoveTools     []string   `yaml:"removeTools"`
	ReplaceTools    []Tool     `yaml:"replaceTools"`
	AddResources    []Resource `yaml:"addResources"`
	RemoveResources []string   `yaml:"removeResources"`
	AddPrompts      []Prompt   `yaml:"addPrompts"`
	RemovePrompts   []string   `yaml:"removePrompts"`
	// AddResourceTemplates and RemoveResourceTemplates change
	// resources/templates/list; a template is known by its uriTemplate.
	AddResourceTemplates    []ResourceTemplate `yaml:"addResourceTemplates"`
	RemoveResourceTemplates []string           `yaml:"removeResourceTemplates"`
}

// Trigger is when an event fires: after Calls calls of Tool, or after the
// Requests-th request.
type Trigger struct {
	Pos
	Tool     string `yaml:"tool"`
	Calls    int    `yaml:"calls"`
	Requests int    `yaml:"requests"`
}
