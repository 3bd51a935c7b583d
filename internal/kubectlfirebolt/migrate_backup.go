package kubectlfirebolt

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/crossplane/function-sdk-go/errors"
)

// Bounds of the backup directory: a custom resource is at most what etcd
// stores (1.5 MiB), and a migration moves at most what a list holds.
const (
	maxBackupFileBytes = 2 << 20
	maxBackupFiles     = listMaxItems
)

// backupFile is where o is saved: <namespace>_<kind>_<name>.json. Names
// and namespaces hold no underscore, so each object has one file.
func backupFile(dir string, o original) string {
	return filepath.Join(dir, o.obj.GetNamespace()+"_"+strings.ToLower(o.kind.kind)+"_"+o.obj.GetName()+".json")
}

// saveBackup writes o to dir: spec, status and metadata, managedFields
// left out. The file is replaced whole (written aside, then renamed), so
// an interrupted save leaves the previous copy.
func saveBackup(dir string, o original) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return errors.Wrapf(err, "cannot create backup directory %s", dir)
	}
	c := o.obj.DeepCopy()
	c.SetManagedFields(nil)
	b, err := json.MarshalIndent(c.Object, "", "  ")
	if err != nil {
		return errors.Wrapf(err, "cannot encode %s", o)
	}
	path := backupFile(dir, o)
	tmp, err := os.CreateTemp(dir, ".saving-*")
	if err != nil {
		return errors.Wrapf(err, "cannot save %s", o)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		_ = tmp.Close()
		return errors.Wrapf(err, "cannot save %s to %s", o, path)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return errors.Wrapf(err, "cannot save %s to %s", o, path)
	}
	if err := tmp.Close(); err != nil {
		return errors.Wrapf(err, "cannot save %s to %s", o, path)
	}
	return errors.Wrapf(os.Rename(tmp.Name(), path), "cannot save %s to %s", o, path)
}

// readBackup reads what dir holds in scope ("" is every namespace). A
// missing directory holds nothing. Every file is checked before it is
// trusted: the claims applied later are made from it.
func readBackup(dir, scope string) (originals, error) {
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		return nil, nil
	case err != nil:
		return nil, errors.Wrapf(err, "cannot read backup directory %s", dir)
	}
	var out originals
	files := 0
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if files++; files > maxBackupFiles {
			return nil, errors.Errorf("backup directory %s: more than %d files", dir, maxBackupFiles)
		}
		o, err := readBackupFile(dir, e.Name())
		if err != nil {
			return nil, err
		}
		if scope == "" || o.obj.GetNamespace() == scope {
			out = append(out, o)
		}
	}
	return out.sorted(), nil
}

// readBackupFile reads and checks one saved custom resource.
func readBackupFile(dir, name string) (original, error) {
	path := filepath.Join(dir, name)
	f, err := os.Open(path) //nolint:gosec // the user names the directory; every file is checked below.
	if err != nil {
		return original{}, errors.Wrapf(err, "cannot read %s", path)
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, maxBackupFileBytes+1))
	if err != nil {
		return original{}, errors.Wrapf(err, "cannot read %s", path)
	}
	if len(b) > maxBackupFileBytes {
		return original{}, errors.Errorf("%s: larger than %d bytes, which no custom resource is", path, maxBackupFileBytes)
	}
	// As the API server's answers are read: whole numbers as int64.
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		return original{}, errors.Wrapf(err, "%s: not a JSON object", path)
	}
	o, err := checkSaved(u)
	if err != nil {
		return original{}, errors.Wrap(err, path)
	}
	if want := filepath.Base(backupFile(dir, o)); want != name {
		return original{}, errors.Errorf("%s: holds %s, which is saved as %s", path, o, want)
	}
	return o, nil
}

// checkSaved checks what a saved file says it is: one of the original's
// kinds, named and namespaced as Kubernetes allows, with the UID owner
// references name and a spec.
func checkSaved(u *unstructured.Unstructured) (original, error) {
	if u.GetAPIVersion() != originalGroup+"/v1alpha1" {
		return original{}, errors.Errorf("apiVersion %q: must be %s/v1alpha1", u.GetAPIVersion(), originalGroup)
	}
	k, ok := kindOf(u.GetKind())
	if !ok {
		return original{}, errors.Errorf("kind %q: must be FireboltEngineClass, FireboltInstance or FireboltEngine", u.GetKind())
	}
	if errs := validation.IsDNS1123Subdomain(u.GetName()); len(errs) > 0 {
		return original{}, errors.Errorf("metadata.name %q: %s", u.GetName(), strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(u.GetNamespace()); len(errs) > 0 {
		return original{}, errors.Errorf("metadata.namespace %q: %s", u.GetNamespace(), strings.Join(errs, "; "))
	}
	if u.GetUID() == "" {
		return original{}, errors.New("metadata.uid: missing; owner references are matched by it")
	}
	if _, ok := u.Object["spec"].(map[string]any); !ok {
		return original{}, errors.New("spec: missing or not an object")
	}
	if g, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "activeGeneration"); ok {
		if _, isInt := g.(int64); !isInt {
			return original{}, errors.Errorf("status.activeGeneration %v: must be a whole number", g)
		}
	}
	return original{kind: k, obj: u}, nil
}

// save is step 3: the original, read again now that nothing changes it,
// checked again, and every custom resource saved before anything is
// changed.
func (m *migration) save() error {
	live, err := m.listLive()
	if err != nil {
		return err
	}
	if err := refuse(live); err != nil {
		return err
	}
	for _, o := range live {
		m.would("save %s to %s", o, backupFile(m.cmd.BackupDir, o))
		if m.cmd.DryRun {
			continue
		}
		if err := saveBackup(m.cmd.BackupDir, o); err != nil {
			return err
		}
	}
	m.live = live
	m.saved = m.saved.merge(live)
	if len(live) == 0 {
		m.printf("  nothing live to save; %d saved earlier\n", len(m.saved))
	}
	return nil
}
