package registry

import (
	"testing"

	"github.com/herald-notify/herald/internal/provider/chat/chatwebhook"
	"github.com/herald-notify/herald/internal/provider/chat/discord"
	"github.com/herald-notify/herald/internal/provider/chat/mattermost"
	"github.com/herald-notify/herald/internal/provider/chat/msteams"
	"github.com/herald-notify/herald/internal/provider/chat/slack"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

// chatFakes are the wire fakes of the chat providers.
var chatFakes = map[string]func(t *testing.T) providertest.Fake{
	"slack":        func(*testing.T) providertest.Fake { return slack.NewFake() },
	"discord":      func(*testing.T) providertest.Fake { return discord.NewFake() },
	"msteams":      func(*testing.T) providertest.Fake { return msteams.NewFake() },
	"mattermost":   func(*testing.T) providertest.Fake { return mattermost.NewFake() },
	"chat-webhook": func(*testing.T) providertest.Fake { return chatwebhook.NewFake() },
}
