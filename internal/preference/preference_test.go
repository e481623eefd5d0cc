package preference_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/preference"
	"github.com/herald-notify/herald/internal/store"
)

func TestOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		prefs    string
		critical bool
		want     map[string]bool // defaults of every channel
		wantCrit bool
	}{
		{name: "no preferences: every channel on", want: map[string]bool{"in_app": true, "email": true, "sms": true, "chat": true, "push": true}},
		{name: "unreadable preferences count as absent", prefs: `[1,2]`,
			want: map[string]bool{"in_app": true, "email": true, "sms": true, "chat": true, "push": true}},
		{name: "top-level all and channels", prefs: `{"all":{"enabled":false},"channels":{"email":{"enabled":true}}}`,
			want: map[string]bool{"in_app": false, "email": true, "sms": false, "chat": false, "push": false}},
		{name: "user on top of workflow", prefs: `{"workflow":{"all":{"enabled":true},"channels":{"sms":{"enabled":false},"push":{"enabled":false}}},` +
			`"user":{"all":{"enabled":true},"channels":{"sms":{"enabled":true}}}}`,
			want: map[string]bool{"in_app": true, "email": true, "sms": true, "chat": true, "push": false}},
		{name: "user all.readOnly makes it critical", prefs: `{"user":{"all":{"enabled":true,"readOnly":true},"channels":{}}}`,
			want: map[string]bool{"in_app": true, "email": true, "sms": true, "chat": true, "push": true}, wantCrit: true},
		{name: "workflow all.readOnly makes it critical", prefs: `{"workflow":{"all":{"enabled":true,"readOnly":true}}}`,
			want: map[string]bool{"in_app": true, "email": true, "sms": true, "chat": true, "push": true}, wantCrit: true},
		{name: "readOnly false is not critical", prefs: `{"user":{"all":{"readOnly":false}}}`,
			want: map[string]bool{"in_app": true, "email": true, "sms": true, "chat": true, "push": true}},
		{name: "the critical flag", critical: true,
			want: map[string]bool{"in_app": true, "email": true, "sms": true, "chat": true, "push": true}, wantCrit: true},
		{name: "wrong types are skipped, the rest is read",
			prefs: `{"user":{"all":{"enabled":"no","readOnly":true},"channels":{"email":{"enabled":false},"sms":true,"tool":{"enabled":false}}}}`,
			want:  map[string]bool{"in_app": true, "email": false, "sms": true, "chat": true, "push": true}, wantCrit: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := preference.Of(store.Workflow{Preferences: store.JSON(tc.prefs), Critical: tc.critical})
			got := map[string]bool{}
			for _, ch := range preference.Channels {
				got[ch] = w.Default(ch)
			}
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.wantCrit, w.Critical)
		})
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	off := `{"channels":{"email":{"enabled":false}}}`
	for _, tc := range []struct {
		name    string
		prefs   string
		choices store.ChannelChoices
		want    preference.State
	}{
		{name: "the default", want: preference.State{Enabled: true, Source: preference.SourceTemplate}},
		{name: "the workflow's default off", prefs: off, want: preference.State{Enabled: false, Source: preference.SourceTemplate}},
		{name: "global off", choices: store.ChannelChoices{Global: map[string]bool{"email": false}},
			want: preference.State{Enabled: false, Source: preference.SourceSubscriber}},
		{name: "global on beats the workflow's default", prefs: off, choices: store.ChannelChoices{Global: map[string]bool{"email": true}},
			want: preference.State{Enabled: true, Source: preference.SourceSubscriber}},
		{name: "workflow-level on beats global off",
			choices: store.ChannelChoices{Global: map[string]bool{"email": false}, Workflow: map[string]bool{"email": true}},
			want:    preference.State{Enabled: true, Source: preference.SourceSubscriber}},
		{name: "workflow-level off beats global on",
			choices: store.ChannelChoices{Global: map[string]bool{"email": true}, Workflow: map[string]bool{"email": false}},
			want:    preference.State{Enabled: false, Source: preference.SourceSubscriber}},
		{name: "another channel's choice does not matter",
			choices: store.ChannelChoices{Global: map[string]bool{"sms": false}, Workflow: map[string]bool{"in_app": false}},
			want:    preference.State{Enabled: true, Source: preference.SourceTemplate}},
		{name: "critical ignores the subscriber", prefs: `{"user":{"all":{"readOnly":true}}}`,
			choices: store.ChannelChoices{Global: map[string]bool{"email": false}, Workflow: map[string]bool{"email": false}},
			want:    preference.State{Enabled: true, Source: preference.SourceTemplate}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := preference.Of(store.Workflow{Preferences: store.JSON(tc.prefs)})
			require.Equal(t, tc.want, w.Resolve("email", tc.choices))
		})
	}
}

func TestStepChannels(t *testing.T) {
	t.Parallel()
	w := store.Workflow{Steps: []store.Step{{Type: "push"}, {Type: "delay"}, {Type: "in_app"}, {Type: "digest"}, {Type: "push"}, {Type: "email"}}}
	require.Equal(t, []string{"in_app", "email", "push"}, preference.StepChannels(w))
	require.Empty(t, preference.StepChannels(store.Workflow{Steps: []store.Step{{Type: "delay"}}}))
	require.True(t, preference.IsChannel("in_app"))
	require.False(t, preference.IsChannel("digest"))
}
