package httpapi

import "net/http"

// ClientAddr is the address a client's failed authentications count
// against (the peer, an IPv6 one by its /64): the dashboard's sign-in limit
// counts the same way.
func ClientAddr(r *http.Request) string { return clientAddr(r) }
