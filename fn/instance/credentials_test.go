package instance

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/resource/composed"
)

func secretWith(data map[string]any) *composed.Unstructured {
	u := composed.New()
	u.SetUnstructuredContent(map[string]any{"apiVersion": "v1", "kind": "Secret", "data": data})
	return u
}

func TestPostgresCredentialsFor(t *testing.T) {
	const candidate = "c4nd1d4te0000000000000000"
	cases := map[string]struct {
		reason       string
		observed     *composed.Unstructured
		want         postgresCredentials
		wantProblems []string
	}{
		"NoSecretUsesCandidate": {
			reason: "The first reconcile mints the Secret from the candidate.",
			want:   postgresCredentials{Username: "firebolt", Password: candidate, Database: "firebolt_metadata"},
		},
		"ObservedSecretIsReproduced": {
			reason:   "Once the Secret exists its password is kept, whatever the candidate.",
			observed: secretWith(map[string]any{"username": "ZmlyZWJvbHQ=", "password": "N2Q0ZTFhOWMwYjNmNTI2ZThhMTdjNGQ5", "database": "ZmlyZWJvbHRfbWV0YWRhdGE="}),
			want:     postgresCredentials{Username: "firebolt", Password: "7d4e1a9c0b3f526e8a17c4d9", Database: "firebolt_metadata"},
		},
		"MissingAndEmptyKeys": {
			reason:       "A Secret someone emptied is reported by key, never repaired with a new password.",
			observed:     secretWith(map[string]any{"username": "ZmlyZWJvbHQ=", "password": ""}),
			want:         postgresCredentials{Username: "firebolt"},
			wantProblems: []string{"key password is missing or empty", "key database is missing or empty"},
		},
		"ChangedNames": {
			reason:       "A user or database other than the ones PostgreSQL was initialised with is reported without its value.",
			observed:     secretWith(map[string]any{"username": "cm9vdA==", "password": "cA==", "database": "b3RoZXI="}),
			want:         postgresCredentials{Username: "root", Password: "p", Database: "other"},
			wantProblems: []string{"key username does not name user firebolt", "key database does not name database firebolt_metadata"},
		},
		"NotBase64": {
			reason:       "Data that is not base64 counts as missing.",
			observed:     secretWith(map[string]any{"username": "ZmlyZWJvbHQ=", "password": "%%%", "database": "ZmlyZWJvbHRfbWV0YWRhdGE="}),
			want:         postgresCredentials{Username: "firebolt", Database: "firebolt_metadata"},
			wantProblems: []string{"key password is missing or empty"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, problems := postgresCredentialsFor(tc.observed, candidate)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ncredentials: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantProblems, problems); diff != "" {
				t.Errorf("%s\nproblems: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
