package httpapi

import "slices"

// RoutePatterns lists the pattern of every route a Server registers, so that
// the bad-input sweep can prove it drives them all.
func RoutePatterns(s *Server) []string { return slices.Clone(s.patterns) }
