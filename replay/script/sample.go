package script

import (
	"encoding/json"
	"slices"
	"text/template"
)

// This file is a sample: a sampling/createMessage request a tool, prompt
// or resource sends the client (its model) before it answers, so that a
// host's sampling handler can be tested against a fake server. See
// asks.go for how each era asks.

type sampleRequest struct {
	messages     []promptMsg
	systemPrompt *template.Template
	fixed        map[string]any // the fields without templates
}

var includeContexts = []string{"none", "thisServer", "allServers"}

func (c *compiler) sample(s *Sample) *ask {
	r := &sampleRequest{fixed: map[string]any{}}
	if len(s.Messages) == 0 {
		c.errorf(s.Pos, "sample needs messages: the conversation to complete")
	}
	r.messages = c.messages(s.Messages, "a sample message")
	if s.SystemPrompt != "" {
		r.systemPrompt = c.template(sub(s.Pos, "systemPrompt"), s.SystemPrompt)
	}
	if s.MaxTokens <= 0 {
		c.errorf(s.Pos, "sample needs maxTokens, a positive number (the spec requires it)")
	}
	r.fixed["maxTokens"] = s.MaxTokens
	if s.Temperature.Set && c.kind(s.Temperature, "number") {
		r.fixed["temperature"] = s.Temperature.V
	}
	if len(s.StopSequences) > 0 {
		r.fixed["stopSequences"] = s.StopSequences
	}
	if s.ModelPreferences.Set && c.kind(s.ModelPreferences, "object") {
		r.fixed["modelPreferences"] = s.ModelPreferences.V
	}
	if s.IncludeContext != "" {
		if !slices.Contains(includeContexts, s.IncludeContext) {
			c.errorf(sub(s.Pos, "includeContext"), "includeContext must be none, thisServer or allServers, got %q", s.IncludeContext)
		}
		r.fixed["includeContext"] = s.IncludeContext
	}
	if s.Meta.Set && c.kind(s.Meta, "object") {
		r.fixed["_meta"] = s.Meta.V
	}
	return &ask{kind: sampleKind, params: r.params, task: c.clientTask(s.Task)}
}

// params renders the sampling/createMessage params for one call.
func (r *sampleRequest) params(data map[string]any) (json.RawMessage, error) {
	msgs, err := renderMessages(r.messages, data)
	if err != nil {
		return nil, err
	}
	p := map[string]any{"messages": msgs}
	for k, v := range r.fixed {
		p[k] = v
	}
	if r.systemPrompt != nil {
		if p["systemPrompt"], err = render(r.systemPrompt, data); err != nil {
			return nil, err
		}
	}
	return mustJSON(p), nil
}
