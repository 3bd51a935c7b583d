package engine

// nextGeneration allocates the generation after n, never a number that the
// status, the routing Service, a recording or an observed object still
// refers to: a live StatefulSet is never taken over by a new generation.
func (m *machine) nextGeneration(n int) int {
	return nextGeneration(n, m.generationInUse)
}

func (m *machine) generationInUse(g int) bool {
	st := m.in.Status
	if g == st.CurrentGeneration || g == st.ActiveGeneration || (st.DrainingGeneration != nil && g == *st.DrainingGeneration) {
		return true
	}
	if _, ok := m.in.Renderings[g]; ok {
		return true
	}
	return routedGeneration(m.in.Observed[RoutingServiceKey]) == g || m.generationExists(g)
}
