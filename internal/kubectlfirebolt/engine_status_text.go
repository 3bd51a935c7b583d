package kubectlfirebolt

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// write prints the report for a person.
func (r EngineReport) write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	kv := func(k, format string, args ...any) {
		_, _ = fmt.Fprintf(tw, "%s:\t%s\n", k, fmt.Sprintf(format, args...))
	}
	kv("Engine", "%s/%s", r.Namespace, r.Name)
	kv("Instance", "%s", r.Instance)
	kv("Class", "%s", orDash(r.Class))
	kv("Phase", "%s", orDash(r.Phase))
	inEffect := "in effect"
	switch r.ObservedGeneration {
	case r.SpecGeneration:
	case 0:
		inEffect = "not in effect yet"
	default:
		inEffect = fmt.Sprintf("not in effect yet (generation %d is)", r.ObservedGeneration)
	}
	kv("Spec", "generation %d, %s", r.SpecGeneration, inEffect)
	replicas := strconv.Itoa(int(r.Replicas))
	if r.EffectiveReplicas != nil && *r.EffectiveReplicas != r.Replicas {
		replicas += fmt.Sprintf(" in spec, %d run by auto-stop", *r.EffectiveReplicas)
	}
	kv("Replicas", "%s", replicas)
	gens := fmt.Sprintf("current %d, active %d", r.CurrentGeneration, r.ActiveGeneration)
	switch {
	case r.Phase == "":
		gens = "none yet"
	case r.ActiveGeneration < 0:
		gens = fmt.Sprintf("current %d, none active yet", r.CurrentGeneration)
	}
	if r.DrainingGeneration != nil {
		gens += fmt.Sprintf(", draining %d", *r.DrainingGeneration)
	}
	kv("Generations", "%s", gens)
	if d := r.Drain; d != nil {
		kv("Drain", "generation %d %s: %s", d.Generation, d.Verdict, d.Message)
		if l := d.Live; l != nil {
			kv("Drain (checked now)", "%s%s", l.Verdict, prefixed(": ", l.Message))
		}
	}
	if a := r.AutoStop; a != nil {
		s := a.Reason
		if a.Replicas != nil {
			s += fmt.Sprintf(", %d replica(s)", *a.Replicas)
		}
		s += prefixed(", last activity ", a.LastActivityTime) + prefixed(", last scaled ", a.LastScaledAt)
		kv("Auto-stop", "%s", s)
	}
	if r.WakeRequested != "" {
		kv("Wake requested", "%s", r.WakeRequested)
	}
	if p := r.PhasedRollout; p != nil {
		s := p.Phase + prefixed(", revision ", p.UpdateRevision)
		if st := p.Step; st != nil {
			s += fmt.Sprintf(", partition %d, step %s (%d check(s) passed in a row, %d failed)%s",
				st.Partition, orDash(string(st.Status)), st.ConsecutiveSuccessfulChecks, st.ConsecutiveFailedChecks, prefixed(": ", st.LastCheckMessage))
		}
		kv("Phased rollout", "%s", s)
	}
	if a := r.Analysis; a != nil {
		kv("Analysis", "generation %d %s, passed %t (%d check(s) passed in a row, %d failed)%s",
			a.Generation, orDash(a.Status), a.Passed, a.ConsecutiveSuccessfulChecks, a.ConsecutiveFailedChecks, prefixed(": ", a.LastCheckMessage))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if err := section(w, "Pods", []string{"GENERATION", "ROLE", "READY", "NOT READY"}, podRows(r.Generations)); err != nil {
		return err
	}
	var crow [][]string
	var next []string
	for _, c := range r.Conditions {
		crow = append(crow, []string{c.Type, c.Status, orDash(c.Reason), c.Message})
		switch {
		case c.Status == string(metav1.ConditionTrue) || c.Type == typeReady:
		case c.Action != "":
			next = append(next, fmt.Sprintf("  %s %s: %s", c.Type, orDash(c.Reason), c.Action))
		default:
			next = append(next, fmt.Sprintf("  %s %s: not in the catalogue; see docs/troubleshooting.md", c.Type, orDash(c.Reason)))
		}
	}
	if err := section(w, "Conditions", []string{"TYPE", "STATUS", "REASON", "MESSAGE"}, crow); err != nil {
		return err
	}
	if len(next) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "Next steps:\n%s\n", strings.Join(next, "\n"))
	return err
}

func podRows(gens []GenerationPods) [][]string {
	rows := make([][]string, 0, len(gens))
	for _, g := range gens {
		ready := strconv.Itoa(g.Ready) + "/"
		if g.Desired != nil {
			ready += strconv.Itoa(int(*g.Desired))
		} else {
			ready += strconv.Itoa(g.Pods) + " (no StatefulSet)"
		}
		rows = append(rows, []string{strconv.Itoa(g.Generation), orDash(strings.Join(g.Roles, ",")), ready, orDash(strings.Join(g.NotReady, " "))})
	}
	return rows
}

// section prints a titled, indented table; nothing without rows.
func section(w io.Writer, title string, header []string, rows [][]string) error {
	if len(rows) == 0 {
		return nil
	}
	if _, err := fmt.Fprintf(w, "%s:\n", title); err != nil {
		return err
	}
	return writeTableIndent(w, "  ", header, rows)
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}
