package provider

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecase(t *testing.T) {
	t.Parallel()
	in := map[string]any{"ipPoolName": "pool", "trackingSettings": map[string]any{"clickTracking": map[string]any{"enable": true}},
		"HTMLBody": "x", "sendAt2": 1, "already_snake": []any{map[string]any{"customArg": 1}}}
	require.Equal(t, map[string]any{"ip_pool_name": "pool", "tracking_settings": map[string]any{"click_tracking": map[string]any{"enable": true}},
		"html_body": "x", "send_at2": 1, "already_snake": []any{map[string]any{"custom_arg": 1}}}, CasingSnake.Recase(in))
	require.Equal(t, map[string]any{"MessageStream": "outbound", "TrackOpens": true, "Metadata": map[string]any{"OrderId": "1"}},
		CasingPascal.Recase(map[string]any{"messageStream": "outbound", "trackOpens": true, "metadata": map[string]any{"orderId": "1"}}))
	same := map[string]any{"ipPoolName": "pool"}
	require.Equal(t, same, CasingCamel.Recase(same))
}
