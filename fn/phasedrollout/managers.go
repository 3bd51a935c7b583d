package phasedrollout

import (
	"encoding/json"
	"slices"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Bounds on what a target's managedFields may cost a call: anyone who can
// write the StatefulSet writes them.
const (
	maxManagedFieldsRead = 64
	maxManagerName       = 128
	maxManagersReported  = 8
)

// partitionOwnership is the part of a managedFields entry that says it owns
// spec.updateStrategy.rollingUpdate.partition; the rest is not decoded.
type partitionOwnership struct {
	Spec struct {
		UpdateStrategy struct {
			RollingUpdate struct {
				Partition *json.RawMessage `json:"f:partition"`
			} `json:"f:rollingUpdate"`
		} `json:"f:updateStrategy"`
	} `json:"f:spec"`
}

// partitionWriters are the field managers other than ours that set the
// target's partition since ours did, sorted, at most maxManagersReported,
// each name at most maxManagerName bytes. Nothing is judged before ours
// has applied (its entry holds the marker annotation whatever happens to
// the partition): until then the partition's owner is whoever created the
// StatefulSet, whose entry also claims the API server's default 0. After
// that, another owner is a writer when it took the partition from ours, or
// shares it (having applied the same value) with a later entry than ours.
func partitionWriters(fields []metav1.ManagedFieldsEntry, ours string) []string {
	var own *metav1.ManagedFieldsEntry
	oursOwns := false
	for i := range min(len(fields), maxManagedFieldsRead) {
		if f := &fields[i]; f.Manager == ours && f.Subresource == "" {
			own, oursOwns = f, ownsPartition(f)
		}
	}
	if own == nil {
		return nil
	}
	var out []string
	for i := range min(len(fields), maxManagedFieldsRead) {
		f := &fields[i]
		if f.Subresource != "" || f.Manager == ours || !ownsPartition(f) {
			continue
		}
		if oursOwns && !after(f.Time, own.Time) {
			continue
		}
		name := clip(f.Manager, maxManagerName)
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	if len(out) > maxManagersReported {
		out = out[:maxManagersReported]
	}
	return out
}

// ownsPartition says a managedFields entry owns the partition.
func ownsPartition(f *metav1.ManagedFieldsEntry) bool {
	var o partitionOwnership
	return f.FieldsV1 != nil && json.Unmarshal(f.FieldsV1.GetRawBytes(), &o) == nil && o.Spec.UpdateStrategy.RollingUpdate.Partition != nil
}

// after says a is later than b; an entry without a time is taken as later,
// so it is reported rather than missed.
func after(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return true
	}
	return a.After(b.Time)
}

// clip cuts s to n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
