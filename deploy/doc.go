// Package deploy holds Herald's deployment files — the Helm chart (helm/),
// the compose file (compose.yaml) and the systemd unit (systemd/), beside the
// repository's Dockerfile — and the tests that check them; it has no code.
// The helm its tests run is built from the tools module in tools/.
package deploy
