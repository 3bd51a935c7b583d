package kubectlfirebolt

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// FieldManager is the plugin's server-side apply field manager.
const FieldManager = "kubectl-firebolt"

// Storage types of --storage-type: managed_table_storage's values.
var storageTypes = []string{"s3", "gcs", "abs"}

// Bucket names, per store, as wide as the store allows so that no bucket
// in use is refused: S3 still serves legacy us-east-1 buckets of up to 255
// letters (either case), digits, '.', '-' and '_'; GCS allows lower case,
// '_' and up to 222 characters when the name has dots; Azure Blob Storage
// containers are 3 to 63 lower-case letters, digits and '-'. Every store
// wants a letter or digit first and last.
var (
	s3BucketName  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{1,253}[A-Za-z0-9]$`)
	gcsBucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$`)
	containerName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)
)

type engineCreateCmd struct {
	Name        string        `arg:"" help:"The engine."`
	Instance    string        `required:"" help:"The FireboltInstance the engine belongs to (spec.instanceRef)."`
	Replicas    int           `default:"1" help:"Engine pods (spec.replicas), 0 to ${maxReplicas}; 0 creates a stopped engine and does not wait."`
	Type        string        `help:"FireboltEngineClass the engine inherits from (spec.engineClassRef)."`
	Image       string        `help:"Engine image (the engine container's image in spec.template)."`
	Bucket      string        `help:"Bucket of the engine's managed tables (customEngineConfig.storage.managed_table_bucket_name)."`
	StorageType string        `name:"storage-type" placeholder:"s3|gcs|abs" help:"Object store of --bucket (customEngineConfig.storage.managed_table_storage); s3 when unset."`
	HostPath    string        `name:"host-path" help:"Node directory for the engine's data (spec.storage.hostPath, created if missing)."`
	Timeout     time.Duration `default:"5m" help:"How long to wait for the engine to be ready."`
}

// validate checks every flag, naming the flag and its rule.
func (cmd engineCreateCmd) validate() error {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if !dnsLabel(cmd.Name, v1alpha1.MaxEngineNameLength) {
		bad("engine name %q: must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter, ending with a letter or digit) of at most %d characters", cmd.Name, v1alpha1.MaxEngineNameLength)
	}
	if !dnsLabel(cmd.Instance, v1alpha1.MaxInstanceNameLength) {
		bad("--instance %q: must be a DNS-1035 label of at most %d characters", cmd.Instance, v1alpha1.MaxInstanceNameLength)
	}
	if cmd.Replicas < 0 || cmd.Replicas > v1alpha1.MaxEngineReplicas {
		bad("--replicas %d: must be between 0 and %d", cmd.Replicas, v1alpha1.MaxEngineReplicas)
	}
	if cmd.Type != "" && len(validation.IsDNS1123Label(cmd.Type)) > 0 {
		bad("--type %q: must be a DNS-1123 label (lower-case letters, digits and '-') of at most 63 characters", cmd.Type)
	}
	if strings.ContainsAny(cmd.Image, " \t\r\n") || len(cmd.Image) > 1024 {
		bad("--image %q: must be an image reference without whitespace, at most 1024 characters", cmd.Image)
	}
	switch {
	case cmd.StorageType != "" && !slices.Contains(storageTypes, cmd.StorageType):
		bad("--storage-type %q: must be one of %s", cmd.StorageType, strings.Join(storageTypes, ", "))
	case cmd.StorageType != "" && cmd.Bucket == "":
		bad("--storage-type %s: needs --bucket, the bucket it names the store of", cmd.StorageType)
	case cmd.Bucket != "" && cmd.storageType() == "abs" && !containerName.MatchString(cmd.Bucket):
		bad("--bucket %q: an Azure Blob Storage container name must be 3 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit", cmd.Bucket)
	case cmd.Bucket != "" && cmd.storageType() == "gcs" && !gcsBucketName.MatchString(cmd.Bucket):
		bad("--bucket %q: a GCS bucket name must be 3 to 222 lower-case letters, digits, '.', '-' and '_', starting and ending with a letter or digit", cmd.Bucket)
	case cmd.Bucket != "" && cmd.storageType() == "s3" && !s3BucketName.MatchString(cmd.Bucket):
		bad("--bucket %q: an S3 bucket name must be 3 to 255 letters, digits, '.', '-' and '_', starting and ending with a letter or digit", cmd.Bucket)
	}
	if cmd.HostPath != "" && (!strings.HasPrefix(cmd.HostPath, "/") || path.Clean(cmd.HostPath) != cmd.HostPath) {
		bad("--host-path %q: must be a clean absolute path such as /mnt/firebolt", cmd.HostPath)
	}
	if cmd.Timeout <= 0 {
		bad("--timeout %s: must be a positive duration such as 90s or 5m", cmd.Timeout)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

func (cmd engineCreateCmd) storageType() string {
	if cmd.StorageType == "" {
		return "s3"
	}
	return cmd.StorageType
}

// claim is the FireboltEngine the flags describe: only the fields they
// set, so that server-side apply owns those and nothing else.
func (cmd engineCreateCmd) claim(namespace string) map[string]any {
	spec := map[string]any{"instanceRef": cmd.Instance, "replicas": cmd.Replicas}
	if cmd.Type != "" {
		spec["engineClassRef"] = cmd.Type
	}
	if cmd.Image != "" {
		spec["template"] = map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "engine", "image": cmd.Image}},
		}}
	}
	if cmd.HostPath != "" {
		spec["storage"] = map[string]any{"hostPath": map[string]any{
			"path": cmd.HostPath, "type": string(corev1.HostPathDirectoryOrCreate),
		}}
	}
	if cmd.Bucket != "" {
		spec["customEngineConfig"] = map[string]any{"storage": map[string]any{
			"managed_table_storage": cmd.storageType(), "managed_table_bucket_name": cmd.Bucket,
		}}
	}
	return map[string]any{
		"apiVersion": v1alpha1.SchemeGroupVersion.String(),
		"kind":       v1alpha1.FireboltEngineKind,
		"metadata":   map[string]any{"name": cmd.Name, "namespace": namespace},
		"spec":       spec,
	}
}

// Run applies the engine and waits for it, as the original: an engine of
// zero replicas is not waited for.
func (cmd engineCreateCmd) Run(e *Env) error {
	if err := cmd.validate(); err != nil {
		return err
	}
	c, err := e.Clients()
	if err != nil {
		return err
	}
	if cmd.Bucket == "" {
		if err := cmd.warnNoBucket(e, c); err != nil {
			return err
		}
	}
	res := c.Dynamic.Resource(engineResource).Namespace(c.Namespace)
	before, err := res.Get(e.Ctx, cmd.Name, metav1.GetOptions{})
	if err != nil && !kerrors.IsNotFound(err) {
		return errors.Wrapf(err, "cannot get fireboltengine %q", cmd.Name)
	}
	body, err := json.Marshal(cmd.claim(c.Namespace))
	if err != nil {
		return errors.Wrap(err, "cannot encode the engine")
	}
	after, err := res.Patch(e.Ctx, cmd.Name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil {
		return errors.Wrapf(err, "cannot apply fireboltengine %q", cmd.Name)
	}

	// Progress goes to stdout only in the human format; -o name, json and
	// yaml keep stdout for what they print.
	progress := e.Out
	if e.Globals.Output != outTable && e.Globals.Output != outWide {
		progress = e.Err
	}
	if _, err := fmt.Fprintf(progress, "fireboltengine/%s %s\n", cmd.Name, applied(before, after)); err != nil {
		return err
	}
	if cmd.Replicas == 0 {
		if _, err := fmt.Fprintln(progress, "0 replicas: not waiting for the engine to be ready"); err != nil {
			return err
		}
	} else {
		w := &waiter{env: e, out: progress, clients: c, name: cmd.Name, timeout: cmd.Timeout, goal: specInEffect}
		if after, err = w.run(); err != nil {
			return err
		}
	}
	return printObject(e, after)
}

// warnNoBucket warns, as the original, when neither --bucket nor the class
// gives the engine object storage for its managed tables; a class that
// does not exist is an error, since the engine would never be ready.
func (cmd engineCreateCmd) warnNoBucket(e *Env, c Clients) error {
	if cmd.Type != "" {
		u, err := getClaim(e.Ctx, c, classResource, cmd.Type)
		if err != nil {
			return errors.Wrap(err, "--type")
		}
		if b, _, _ := unstructured.NestedString(u.Object, "spec", "customEngineConfig", "storage", "managed_table_bucket_name"); b != "" {
			return nil
		}
	}
	_, err := fmt.Fprintln(e.Err, "warning: no object storage: neither --bucket nor the engine class sets customEngineConfig.storage.managed_table_bucket_name, so the engine has nowhere to keep managed tables")
	return err
}

// applied says what the apply did: created, configured (the spec changed)
// or unchanged.
func applied(before, after *unstructured.Unstructured) string {
	switch {
	case before == nil:
		return "created"
	case before.GetGeneration() != after.GetGeneration():
		return "configured"
	}
	return "unchanged"
}

// printObject prints one claim in the -o format: its kind/name, or the
// whole object; the table formats have said everything already.
func printObject(e *Env, u *unstructured.Unstructured) error {
	switch e.Globals.Output {
	case outName:
		_, err := fmt.Fprintf(e.Out, "fireboltengine/%s\n", u.GetName())
		return err
	case outJSON, outYAML:
		return writeStructured(e.Out, e.Globals.Output, u.Object)
	}
	return nil
}

// dnsLabel: a DNS-1035 label of at most max characters.
func dnsLabel(s string, maxLen int) bool {
	return len(s) <= maxLen && len(validation.IsDNS1035Label(s)) == 0
}
