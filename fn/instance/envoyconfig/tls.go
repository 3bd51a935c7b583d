package envoyconfig

import (
	"encoding/json"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/errors"
)

// Listener is the client listener's TLS posture. The zero value is plain
// HTTP.
type Listener struct {
	// Closed leaves the client listener out: its port refuses every
	// connection while a tightening stages (see the instance's
	// GatewayTLSReady), so no pod serves the weaker posture on the new
	// configuration.
	Closed bool
	// TLS serves the certificate mounted at GatewayCertDir.
	TLS bool
	// ClientCA requires client certificates signed by the CA mounted at
	// ClientTrustDir (mutual TLS).
	ClientCA bool
	// CRL refuses client certificates the revocation list mounted at
	// ClientTrustDir revokes.
	CRL bool
}

// Where the gateway pod mounts the listener's TLS material, and the keys
// Envoy reads there. Its own tree, not under the config mount: a Secret
// mounted inside the ConfigMap's volume would be a mount point inside an
// atomically swapped directory.
const (
	GatewayCertDir = "/etc/envoy-tls/gateway"
	ClientTrustDir = "/etc/envoy-tls/client"

	KeyCertificate = "tls.crt"
	KeyPrivateKey  = "tls.key"
	KeyCA          = "ca.crt"
	KeyCRL         = "crl.pem"
)

// The SDS resources Envoy loads the TLS material through, each a file in
// the gateway ConfigMap next to envoy.yaml. Loaded from files through SDS,
// not named inline, because Envoy then watches the mounted Secrets and
// reloads a renewed certificate, a new client CA or a new revocation list
// without a restart, and the function never has to read a Secret to know
// it changed.
const (
	SDSCertificateKey = "sds-certificate.yaml"
	SDSValidationKey  = "sds-validation.yaml"

	sdsCertificateName = "gateway_certificate"
	sdsValidationName  = "client_validation"
	tlsTransportSocket = "envoy.transport_sockets.tls"
	// minimumTLS is the original's floor; no maximum is set.
	minimumTLS = "TLSv1_2"
)

// Files returns every file of the gateway ConfigMap for an instance:
// envoy.yaml and, with TLS, the SDS resources it loads. Keys are sorted by
// the caller's map; the bytes are deterministic.
func Files(p Params) (map[string]string, error) {
	y, err := Config(p)
	if err != nil {
		return nil, err
	}
	out := map[string]string{ConfigKey: string(y)}
	l := p.Listener
	if l.Closed || !l.TLS {
		return out, nil
	}
	cert := tlsSecret{typeURL: typeOf("envoy.extensions.transport_sockets.tls.v3.Secret"), Name: sdsCertificateName,
		TLSCertificate: &tlsCertificate{
			CertificateChain: fileSource{Filename: GatewayCertDir + "/" + KeyCertificate},
			PrivateKey:       fileSource{Filename: GatewayCertDir + "/" + KeyPrivateKey},
			WatchedDirectory: &watchedDirectory{Path: GatewayCertDir},
		}}
	if out[SDSCertificateKey], err = sdsFile(cert); err != nil {
		return nil, err
	}
	if !l.ClientCA {
		return out, nil
	}
	v := &validationContext{
		TrustedCA:        fileSource{Filename: ClientTrustDir + "/" + KeyCA},
		WatchedDirectory: &watchedDirectory{Path: ClientTrustDir},
	}
	if l.CRL {
		v.CRL = &fileSource{Filename: ClientTrustDir + "/" + KeyCRL}
	}
	validation := tlsSecret{typeURL: typeOf("envoy.extensions.transport_sockets.tls.v3.Secret"), Name: sdsValidationName, ValidationContext: v}
	if out[SDSValidationKey], err = sdsFile(validation); err != nil {
		return nil, err
	}
	return out, nil
}

// FileKeys are the keys of Files' map in order, for the ConfigMap volume's
// items.
func FileKeys(files map[string]string) []string {
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sdsFile is a DiscoveryResponse holding one resource, as Envoy reads a
// path config source.
func sdsFile(s tlsSecret) (string, error) {
	j, err := json.Marshal(discoveryResponse{Resources: []tlsSecret{s}})
	if err != nil {
		return "", errors.Wrap(err, "cannot marshal SDS resource")
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return "", errors.Wrap(err, "cannot convert SDS resource to YAML")
	}
	return string(y), nil
}

// downstreamTLS is the client listener's transport socket for l.
func downstreamTLS(l Listener) *transportSocket {
	if l.Closed || !l.TLS {
		return nil
	}
	ctx := downstreamTLSContext{
		typeURL: typeOf("envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext"),
		CommonTLSContext: commonTLSContext{
			TLSParams:                      tlsParams{TLSMinimumProtocolVersion: minimumTLS},
			TLSCertificateSDSSecretConfigs: []sdsSecretConfig{sdsConfig(sdsCertificateName, SDSCertificateKey)},
		},
	}
	if l.ClientCA {
		v := sdsConfig(sdsValidationName, SDSValidationKey)
		ctx.CommonTLSContext.ValidationContextSDSSecretConfig = &v
		ctx.RequireClientCertificate = true
	}
	return &transportSocket{Name: tlsTransportSocket, TypedConfig: ctx}
}

// sdsConfig points at the SDS file key of the config mount, reloaded when
// the ConfigMap's volume is swapped.
func sdsConfig(name, key string) sdsSecretConfig {
	return sdsSecretConfig{Name: name, SDSConfig: configSource{
		PathConfigSource:   pathConfigSource{Path: ConfigMount + "/" + key, WatchedDirectory: watchedDirectory{Path: ConfigMount}},
		ResourceAPIVersion: "V3",
	}}
}

// ConfigMount is where the gateway pod mounts its ConfigMap.
const ConfigMount = "/etc/envoy"
