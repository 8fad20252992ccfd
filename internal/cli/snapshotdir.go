package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/kube-pressure/pressure/internal/kubeconv"
)

// The files of a snapshot directory, in the formats the cluster serves.
const (
	FileNode          = "node.json"           // v1.Node
	FilePods          = "pods.json"           // v1.PodList of the pods bound to the node
	FileSummary       = "summary.json"        // the kubelet Summary API (stats/v1alpha1)
	FileKubeletConfig = "kubelet-config.json" // /configz output, or a bare KubeletConfiguration
)

// snapshotFiles lists the files in the order they are read and reported.
var snapshotFiles = []string{FileNode, FilePods, FileSummary, FileKubeletConfig}

// optionalFiles are the files a snapshot may have besides snapshotFiles, in the order they are written.
var optionalFiles = []string{FileCgroups, FileStatsTimes}

// Snapshot is what a decision needs about one node, decoded.
type Snapshot struct {
	Node          corev1.Node
	Pods          corev1.PodList
	Summary       statsv1alpha1.Summary
	KubeletConfig kubeconv.KubeletConfig
	// Cgroups is the agent's own view of the node (FileCgroups, written with --local); nil when the
	// snapshot has none.
	Cgroups *CgroupSamples
	// StatsTimes is when the kubelet last measured the node's memory, to the millisecond (FileStatsTimes,
	// written by record); nil when the snapshot has none.
	StatsTimes *StatsTimes
	// Raw holds each file's bytes as read or fetched, by file name.
	Raw map[string][]byte
	// Origin names where each file came from (a path or an endpoint), for errors and warnings.
	Origin map[string]string
	// Unavailable says what a live fetch could not get (the kubelet did not answer) and what the
	// report shows instead; empty for a complete snapshot.
	Unavailable []string
}

// LoadSnapshotDir reads a snapshot directory. Every error names the file (and field when known); a
// missing directory, or a file given for it, is one error naming it.
func LoadSnapshotDir(fsys fs.FS, dir string) (*Snapshot, error) {
	if err := checkSnapshotDir(fsys, dir); err != nil {
		return nil, err
	}
	raw, origin := map[string][]byte{}, map[string]string{}
	var errs []error
	for _, name := range snapshotFiles {
		origin[name] = filepath.Join(dir, name)
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			errs = append(errs, &FileError{File: origin[name], Err: err})
			continue
		}
		raw[name] = data
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("snapshot %s: %w", dir, errors.Join(errs...))
	}
	for _, name := range optionalFiles {
		switch data, err := fs.ReadFile(fsys, name); {
		case errors.Is(err, fs.ErrNotExist):
			// optional: a snapshot without the agent's view or the stats' times
		case err != nil:
			return nil, fmt.Errorf("snapshot %s: %w", dir, &FileError{File: filepath.Join(dir, name), Err: err})
		default:
			raw[name], origin[name] = data, filepath.Join(dir, name)
		}
	}
	return ParseSnapshot(raw, origin)
}

// snapshotDirWanted says what a snapshot directory is, for the errors about one.
const snapshotDirWanted = "want the directory that \"kubectl pressure snapshot NODE --out DIR\" wrote (" +
	FileNode + ", " + FilePods + ", " + FileSummary + ", " + FileKubeletConfig + ")"

// checkSnapshotDir says, once, that the snapshot directory is missing or is a file.
func checkSnapshotDir(fsys fs.FS, dir string) error {
	fi, err := fs.Stat(fsys, ".")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("snapshot %s: no such directory: %s", dir, snapshotDirWanted)
	case errors.Is(err, syscall.ENOTDIR) || err == nil && !fi.IsDir():
		return fmt.Errorf("snapshot %s: a file, not a directory: %s", dir, snapshotDirWanted)
	case err != nil:
		return fmt.Errorf("snapshot %s: %w", dir, err)
	}
	return nil
}

// ParseSnapshot decodes the four files of a snapshot. origin names each file in errors (the file
// name itself when absent). Every file is checked; all problems are returned, joined.
func ParseSnapshot(raw map[string][]byte, origin map[string]string) (*Snapshot, error) {
	s := &Snapshot{Raw: raw, Origin: map[string]string{}}
	for _, name := range snapshotFiles {
		s.Origin[name] = name
		if o, ok := origin[name]; ok {
			s.Origin[name] = o
		}
	}
	for _, name := range optionalFiles {
		if o, ok := origin[name]; ok {
			s.Origin[name] = o
		}
	}
	errs := []error{
		s.parseCgroups(raw),
		s.parseStatsTimes(raw),
		s.parseNode(raw[FileNode]),
		s.parsePods(raw[FilePods]),
		s.parseSummary(raw[FileSummary]),
		s.parseKubeletConfig(raw[FileKubeletConfig]),
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Snapshot) parseNode(data []byte) error {
	f := s.Origin[FileNode]
	if err := decodeJSON(f, data, &s.Node); err != nil {
		return err
	}
	if err := checkKind(f, s.Node.TypeMeta, "Node"); err != nil {
		return err
	}
	if s.Node.Name == "" {
		return &FileError{File: f, Field: "metadata.name", Err: errors.New("missing: a v1.Node has a name")}
	}
	return nil
}

// podsWanted says what pods.json may hold.
const podsWanted = "want a JSON object (a v1.PodList, or a v1 List of pods as kubectl get pods -o json prints) " +
	"or a JSON array of pods"

// parsePods accepts a v1.PodList (the API), a v1 List of pods (`kubectl get pods -o json`) and a
// bare JSON array of pods. An object that is neither (`{}`) is an error, as are two pods with one UID.
func (s *Snapshot) parsePods(data []byte) error {
	f := s.Origin[FilePods]
	if len(bytes.TrimSpace(data)) == 0 {
		return &FileError{File: f, Err: errors.New("empty file, " + podsWanted)}
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '[' {
		if err := decodeJSON(f, data, &s.Pods.Items); err != nil {
			return err
		}
		return checkPods(f, s.Pods.Items, "[%d]")
	}
	if err := decodeJSON(f, data, &s.Pods); err != nil {
		return err
	}
	if s.Pods.Kind == "List" && (s.Pods.APIVersion == "" || s.Pods.APIVersion == "v1") {
		return checkPods(f, s.Pods.Items, "items[%d]")
	}
	if err := checkKind(f, s.Pods.TypeMeta, "PodList"); err != nil {
		return err
	}
	if s.Pods.Kind == "" && !hasKey(data, "items") {
		return &FileError{File: f, Err: errors.New("no kind and no items: " + podsWanted)}
	}
	return checkPods(f, s.Pods.Items, "items[%d]")
}

// checkPods rejects an item that is not a v1 Pod and a UID given to two pods; at is the format of
// an item's path.
func checkPods(file string, pods []corev1.Pod, at string) error {
	seen := map[types.UID]int{}
	for i := range pods {
		p := &pods[i]
		if p.Kind != "" && p.Kind != "Pod" || p.APIVersion != "" && p.APIVersion != "v1" {
			return &FileError{File: file, Field: fmt.Sprintf(at, i) + ".kind",
				Err: fmt.Errorf("%s %q, want a v1 Pod", p.APIVersion, p.Kind)}
		}
		if p.UID == "" {
			continue
		}
		if j, ok := seen[p.UID]; ok {
			return &FileError{File: file, Field: fmt.Sprintf(at, i) + ".metadata.uid",
				Err: fmt.Errorf("%q is also the uid of "+at+" (pod %s/%s): every pod has its own uid", p.UID, j,
					pods[j].Namespace, pods[j].Name)}
		}
		seen[p.UID] = i
	}
	return nil
}

// hasKey reports whether data is a JSON object with the top-level key.
func hasKey(data []byte, key string) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	_, ok := top[key]
	return ok
}

func (s *Snapshot) parseSummary(data []byte) error {
	f := s.Origin[FileSummary]
	if err := decodeJSON(f, data, &s.Summary); err != nil {
		return err
	}
	if s.Summary.Node.NodeName == "" {
		return &FileError{File: f, Field: "node.nodeName", Err: errors.New("missing: not a kubelet Summary (stats/summary)")}
	}
	return nil
}

func (s *Snapshot) parseKubeletConfig(data []byte) error {
	f := s.Origin[FileKubeletConfig]
	if len(bytes.TrimSpace(data)) == 0 {
		return &FileError{File: f, Err: errors.New("empty file, want a KubeletConfiguration or the /configz output")}
	}
	kc, err := kubeconv.LoadKubeletConfig(bytes.NewReader(data), f)
	if err != nil {
		// LoadKubeletConfig already names the file; add the field when a value is malformed.
		fe := &FileError{File: f, Err: err, Field: locateBadValue(data)}
		if fe.Field == "" {
			return err
		}
		return fe
	}
	s.KubeletConfig = kc
	return nil
}

// checkKind accepts an empty kind/apiVersion (hand-written files) or exactly v1 and want.
func checkKind(file string, tm metav1.TypeMeta, want string) error {
	if tm.Kind != "" && tm.Kind != want {
		return &FileError{File: file, Field: "kind", Err: fmt.Errorf("%q, want %q", tm.Kind, want)}
	}
	if tm.APIVersion != "" && tm.APIVersion != "v1" {
		return &FileError{File: file, Field: "apiVersion", Err: fmt.Errorf("%q, want \"v1\"", tm.APIVersion)}
	}
	return nil
}

// parseCgroups parses FileCgroups when the snapshot has it.
func (s *Snapshot) parseCgroups(raw map[string][]byte) error {
	data, ok := raw[FileCgroups]
	if !ok {
		return nil
	}
	cs, err := ParseCgroupSamples(bytes.NewReader(data), s.originOf(FileCgroups))
	s.Cgroups = cs
	return err
}

// originOf names a file of the snapshot in errors: where it came from when known, else its name.
func (s *Snapshot) originOf(name string) string {
	if o, ok := s.Origin[name]; ok {
		return o
	}
	return name
}

// parseStatsTimes parses FileStatsTimes when the snapshot has it.
func (s *Snapshot) parseStatsTimes(raw map[string][]byte) error {
	data, ok := raw[FileStatsTimes]
	if !ok {
		return nil
	}
	st, err := ParseStatsTimes(bytes.NewReader(data), s.originOf(FileStatsTimes))
	s.StatsTimes = st
	return err
}

// SetStatsTimes adds the time of the kubelet's node memory stats to the snapshot (FileStatsTimes).
func (s *Snapshot) SetStatsTimes(st StatsTimes) error {
	data, err := marshalStatsTimes(st)
	if err != nil {
		return err
	}
	st.Kind = KindStatsTimes
	s.Raw[FileStatsTimes], s.StatsTimes = data, &st
	return nil
}

// SetCgroups adds the agent's own view of the node to the snapshot (FileCgroups).
func (s *Snapshot) SetCgroups(cs CgroupSamples) error {
	data, err := marshalCgroupSamples(cs)
	if err != nil {
		return err
	}
	s.Raw[FileCgroups], s.Cgroups = data, &cs
	s.Cgroups.Kind = KindCgroupSamples
	return nil
}

// WriteDir writes the snapshot's raw files into dir (created 0700 if needed), each file 0600: a
// snapshot describes the workloads of a node.
func (s *Snapshot) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	names := append([]string{}, snapshotFiles...)
	for _, name := range optionalFiles {
		if _, ok := s.Raw[name]; ok {
			names = append(names, name)
		}
	}
	for _, name := range names {
		data := s.Raw[name]
		if len(data) > 0 && data[len(data)-1] != '\n' {
			data = append(append([]byte{}, data...), '\n')
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
		if err := os.Chmod(path, 0o600); err != nil { // an existing file keeps its mode in WriteFile
			return err
		}
	}
	return nil
}
