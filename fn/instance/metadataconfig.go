package instance

import (
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/errors"
)

// Internal PostgreSQL facts the metadata configuration refers to.
const (
	postgresUser          = "firebolt"
	postgresDatabase      = "firebolt_metadata"
	postgresDefaultSchema = "public"
)

// metadataConfigKey is the ConfigMap key the metadata service reads.
const metadataConfigKey = "config.yaml"

// postgresTarget is where the metadata service stores its state.
type postgresTarget struct {
	Host     string
	Port     int32
	Database string
	Schema   string
}

// The configuration is built as data and marshalled, never templated, so a
// user string (spec.id, host, database, schema) is always one quoted scalar
// and can never add keys.
type metadataConfig struct {
	PensieveLite pensieveLite `json:"pensieve_lite"`
}

type pensieveLite struct {
	DefaultAccountID *string         `json:"default_account_id,omitempty"`
	Host             string          `json:"host"`
	Port             int32           `json:"port"`
	ServerThreads    *int            `json:"server_threads,omitempty"`
	LogLevel         string          `json:"log_level,omitempty"`
	MetadataStorage  metadataStorage `json:"metadata_storage"`
}

type metadataStorage struct {
	PostgreSQL        postgresqlStorage  `json:"postgresql"`
	GarbageCollection *garbageCollection `json:"garbage_collection,omitempty"`
}

type postgresqlStorage struct {
	Host              string     `json:"host"`
	Port              int32      `json:"port"`
	Database          string     `json:"database"`
	Schema            string     `json:"schema,omitempty"`
	Keepalive         *keepalive `json:"keepalive,omitempty"`
	ConnectTimeoutSec int        `json:"connect_timeout_sec,omitempty"`
}

type keepalive struct {
	Enabled     int `json:"enabled"`
	IdleSec     int `json:"idle_sec"`
	IntervalSec int `json:"interval_sec"`
	Count       int `json:"count"`
}

type garbageCollection struct {
	Enabled        bool `json:"enabled"`
	IntervalMS     int  `json:"interval_ms"`
	TimeHorizonSec int  `json:"time_horizon_sec"`
}

// renderMetadataConfig returns config.yaml. Both services read the account
// id, the listener and where their state lives, schema included (a tenant's
// external PostgreSQL may keep it outside public), as the original renders
// them in both modes; only the legacy service gets its tuning keys.
func renderMetadataConfig(id string, pg postgresTarget, ng bool) (string, error) {
	c := metadataConfig{PensieveLite: pensieveLite{
		DefaultAccountID: &id,
		Host:             "0.0.0.0",
		Port:             MetadataPort,
		MetadataStorage: metadataStorage{PostgreSQL: postgresqlStorage{
			Host:     pg.Host,
			Port:     pg.Port,
			Database: pg.Database,
			Schema:   pg.Schema,
		}},
	}}
	if !ng {
		threads := 0
		p := &c.PensieveLite
		p.ServerThreads = &threads
		p.LogLevel = "information"
		s := &p.MetadataStorage
		s.PostgreSQL.Keepalive = &keepalive{Enabled: 1, IdleSec: 120, IntervalSec: 30, Count: 5}
		s.PostgreSQL.ConnectTimeoutSec = 5
		s.GarbageCollection = &garbageCollection{Enabled: true, IntervalMS: 3600000, TimeHorizonSec: 86400}
	}
	b, err := yaml.Marshal(c)
	if err != nil {
		return "", errors.Wrap(err, "cannot marshal metadata configuration")
	}
	return string(b), nil
}
