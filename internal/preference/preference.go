// Package preference decides whether a subscriber gets a workflow's step on
// a channel. In order of precedence, lowest first: the workflow's channel
// defaults (every channel on unless its preferences say otherwise), the
// subscriber's global choices, the subscriber's choices for that workflow.
// A critical workflow — `critical`, or preferences whose `all.readOnly` is
// true — ignores the subscriber's choices.
package preference

import (
	"encoding/json"
	"slices"

	"github.com/herald-notify/herald/internal/store"
)

// Channels are the channels a preference covers, in the order they are listed.
var Channels = []string{"in_app", "email", "sms", "chat", "push"}

// IsChannel reports whether a step type is a channel preferences cover
// (delay and digest steps are not).
func IsChannel(stepType string) bool { return slices.Contains(Channels, stepType) }

// Sources of a channel's state.
const (
	// SourceTemplate: the workflow's default decided.
	SourceTemplate = "template"
	// SourceSubscriber: the subscriber's own choice decided.
	SourceSubscriber = "subscriber"
)

// Workflow is what a workflow's own preferences say.
type Workflow struct {
	defaults map[string]bool
	// Critical workflows ignore subscribers' preferences.
	Critical bool
}

// flag reads m[key] when it is a boolean.
func flag(m map[string]any, key string) (v, ok bool) {
	v, ok = m[key].(bool)
	return v, ok
}

// Of reads a workflow's preferences. They are stored as sent at creation:
// {all, channels} at the top level, or under `default`, `workflow` (the
// workflow's own) and `user` (the dashboard user's, on top). Later levels
// win channel by channel; a channel none of them sets follows the last
// `all.enabled`, else it is on. A value of the wrong type counts as absent.
func Of(w store.Workflow) Workflow {
	out := Workflow{defaults: map[string]bool{}, Critical: w.Critical}
	var levels map[string]json.RawMessage
	if len(w.Preferences) == 0 || json.Unmarshal(w.Preferences, &levels) != nil {
		levels = nil
	}
	all := true
	set := map[string]bool{}
	for _, raw := range []json.RawMessage{w.Preferences, levels["default"], levels["workflow"], levels["user"]} {
		// Each level is {all, channels}; a value of the wrong type is skipped.
		var l map[string]any
		if len(raw) == 0 || json.Unmarshal(raw, &l) != nil {
			continue
		}
		a, _ := l["all"].(map[string]any)
		if v, ok := flag(a, "enabled"); ok {
			all = v
		}
		if v, _ := flag(a, "readOnly"); v {
			out.Critical = true
		}
		chans, _ := l["channels"].(map[string]any)
		for ch, c := range chans {
			c, _ := c.(map[string]any)
			if v, ok := flag(c, "enabled"); ok && IsChannel(ch) {
				out.defaults[ch], set[ch] = v, true
			}
		}
	}
	for _, ch := range Channels {
		if !set[ch] {
			out.defaults[ch] = all
		}
	}
	return out
}

// Default is a channel's state before any subscriber's choice.
func (w Workflow) Default(channel string) bool { return w.defaults[channel] }

// State is a channel's state for one subscriber and what decided it.
type State struct {
	Enabled bool
	Source  string
}

// Resolve is a channel's state for a subscriber with those choices.
func (w Workflow) Resolve(channel string, c store.ChannelChoices) State {
	s := State{Enabled: w.defaults[channel], Source: SourceTemplate}
	if w.Critical {
		return s
	}
	for _, m := range []map[string]bool{c.Global, c.Workflow} {
		if v, ok := m[channel]; ok {
			s = State{Enabled: v, Source: SourceSubscriber}
		}
	}
	return s
}

// StepChannels are the channels of a workflow's steps, each once, in the
// order of Channels.
func StepChannels(w store.Workflow) []string {
	var out []string
	for _, ch := range Channels {
		if slices.ContainsFunc(w.Steps, func(s store.Step) bool { return s.Type == ch }) {
			out = append(out, ch)
		}
	}
	return out
}
