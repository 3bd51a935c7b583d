package phased

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Describe says where a rolling rollout stands, for a condition message.
// It changes only when the status does, so it causes no write of its own.
func Describe(st v1alpha1.PhasedRolloutStatus) string {
	rp := st.RollingPodStatus
	if rp == nil {
		return "rolling out revision " + st.UpdateRevision
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rolling out revision %s: pods from ordinal %s on are let go; step %s", st.UpdateRevision,
		strconv.FormatInt(int64(rp.Partition), 10), rp.Status)
	if rp.Status == v1alpha1.RollingPodWaitForChecks || rp.Status == v1alpha1.RollingPodPrometheusError {
		fmt.Fprintf(&b, ", %d successful and %d failed checks in a row", rp.ConsecutiveSuccessfulChecks, rp.ConsecutiveFailedChecks)
	}
	if rp.LastCheckMessage != "" {
		b.WriteString("; last check: " + rp.LastCheckMessage)
	}
	return b.String()
}
