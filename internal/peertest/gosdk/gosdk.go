// Package gosdk builds the go-sdk MCP server that tests and benchmarks
// use as the real Go peer: in process (recorder tests) or as the
// gosdkserver command. It is test plumbing; nothing in the product
// imports it.
//
// Tools: echo (text back), add and sum (a+b, with structured output),
// progress (sends steps progress notifications to the caller's token and
// answers "done N steps"), slow (three progress notifications), counter
// (counts its calls), grow (adds a tool "grown", so the server sends
// tools/list_changed), confirm (asks the client for a name with an
// elicitation form, then answers "hello NAME": in 2026-07-28 by an
// input_required result the client retries with inputResponses, SEP-2322;
// in the handshake era go-sdk turns that into an elicitation/create request
// to the client). Its requestState names this process, and a retry with a
// state another process gave gets an error result, as a server that
// signs its states would answer.
package gosdk

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

type progressIn struct {
	Steps int `json:"steps"`
}

// NewServer returns a new server with the tools above, named name.
func NewServer(name string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two integers"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports progress in steps"},
		func(ctx context.Context, req *mcp.CallToolRequest, in progressIn) (*mcp.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= in.Steps; i++ {
				if tok != nil {
					err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps),
						Message: fmt.Sprintf("step %d", i),
					})
					if err != nil {
						return nil, nil, err
					}
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("done %d steps", in.Steps)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sum", Description: "Adds two integers"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	var calls atomic.Int64
	mcp.AddTool(s, &mcp.Tool{Name: "counter", Description: "Counts its calls"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(strconv.FormatInt(calls.Add(1), 10)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Reports progress in three steps"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := 1; i <= 3; i++ {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i),
					})
				}
			}
			return text("done"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Adds the tool grown"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "grown", Description: "Added by grow"},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return text("grown"), nil, nil
				})
			return text("grew"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "confirm", Description: "Asks the client for a name, then greets it"}, confirm)
	return s
}

// confirmState is the requestState confirm gives: its own in each process.
var confirmState = "step=1;boot=" + rand.Text()[:8]

// confirm asks for a name unless the call carries the answer.
func confirm(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	answer, ok := req.Params.InputResponses["who"].(*mcp.ElicitResult)
	if ok && req.Params.RequestState != confirmState {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: fmt.Sprintf("requestState %q was not given by this server", req.Params.RequestState)}}}, nil, nil
	}
	if !ok {
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{"who": &mcp.ElicitParams{
				Message: "What is your name?",
				RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
					"name": {Type: "string"},
				}},
			}},
			RequestState: confirmState,
		}, nil, nil
	}
	name, _ := answer.Content["name"].(string)
	return text("hello " + name), nil, nil
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
