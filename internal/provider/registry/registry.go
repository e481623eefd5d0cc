// Package registry is the table of every provider Herald delivers through:
// provider id → channel, credential schema and constructor. Each channel's
// entries are in its own file.
package registry

import "github.com/herald-notify/herald/internal/provider"

// Default returns the registry of every provider Herald delivers through.
func Default() *provider.Registry {
	var all []provider.Entry
	for _, list := range [][]provider.Entry{email, sms, chat, push} {
		all = append(all, list...)
	}
	return provider.NewRegistry(all...)
}
