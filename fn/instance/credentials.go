package instance

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	"github.com/crossplane/function-sdk-go/resource/composed"
)

// postgresCredentialsFor returns the internal credentials to render. The
// function is stateless, so the password is minted once (candidate, when
// the Secret does not exist) and from then on reproduced from the Secret
// Crossplane observes: PostgreSQL keeps the password it was initialised
// with, so the Secret must never change.
//
// An existing Secret that does not hold what the operator wrote is not
// repaired (a new password would lock the metadata service out of its
// database); problems lists what is wrong by key name, never by value.
func postgresCredentialsFor(observed *composed.Unstructured, candidate string) (postgresCredentials, []string) {
	if observed == nil {
		return postgresCredentials{Username: postgresUser, Password: candidate, Database: postgresDatabase}, nil
	}
	data, _ := observed.Object["data"].(map[string]any)
	var problems []string
	get := func(key string) string {
		s, _ := data[key].(string)
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b) == 0 {
			problems = append(problems, fmt.Sprintf("key %s is missing or empty", key))
			return ""
		}
		return string(b)
	}
	c := postgresCredentials{Username: get(KeyUsername), Password: get(KeyPassword), Database: get(KeyDatabase)}
	if c.Username != "" && c.Username != postgresUser {
		problems = append(problems, fmt.Sprintf("key %s does not name user %s", KeyUsername, postgresUser))
	}
	if c.Database != "" && c.Database != postgresDatabase {
		problems = append(problems, fmt.Sprintf("key %s does not name database %s", KeyDatabase, postgresDatabase))
	}
	return c, problems
}

// missingKeys lists the required keys a Secret lacks, sorted.
func missingKeys(have map[string]bool, required ...string) []string {
	var out []string
	for _, k := range required {
		if !have[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i := range s {
		q[i] = fmt.Sprintf("%q", s[i])
	}
	return strings.Join(q, ", ")
}
