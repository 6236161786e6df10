package server

// contextAPI is the endpoints that open the playground from a report step.
func (s *Server) contextAPI() []route { return nil }
