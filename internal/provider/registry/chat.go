package registry

import (
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/chat/chatwebhook"
	"github.com/herald-notify/herald/internal/provider/chat/discord"
	"github.com/herald-notify/herald/internal/provider/chat/mattermost"
	"github.com/herald-notify/herald/internal/provider/chat/msteams"
	"github.com/herald-notify/herald/internal/provider/chat/slack"
)

// chat lists the chat providers.
var chat = []provider.Entry{slack.Entry, discord.Entry, msteams.Entry, mattermost.Entry, chatwebhook.Entry}
