// flux-apply builds a folder with kustomize's krusty and applies the result with Flux's
// server-side apply engine (github.com/fluxcd/pkg/ssa), configured the way
// kustomize-controller configures it for a Kustomization: field manager
// "kustomize-controller", owner labels kustomize.toolkit.fluxcd.io/{name,namespace},
// the controller's exclusion/force/if-not-present selectors and metadata cleanup,
// ApplyAllStaged (CRDs first, waited for), then a health wait as `spec.wait: true` does.
//
// It is a test tool of clinv (tests/cluster/flux_engine.rs), built and cached by
// scripts/flux-apply. Output: one JSON document on stdout, errors on stderr, exit 1.
//
//	flux-apply -kubeconfig K -root REPO -path REL [-name N] [-namespace NS] [-force] [-wait]
//	flux-apply -build-only -root REPO -path REL    (prints the built YAML)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/normalize"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// The Kustomization API group: the owner label prefix and the selector keys.
const group = "kustomize.toolkit.fluxcd.io"

type entry struct {
	Subject string `json:"subject"`
	Action  string `json:"action"`
}

type result struct {
	Entries []entry `json:"entries"`
	Error   string  `json:"error,omitempty"`
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the target cluster")
	root := flag.String("root", "", "repository root (the source artifact)")
	path := flag.String("path", "", "folder inside the root (the Kustomization's spec.path)")
	name := flag.String("name", "clusterinventory", "the Kustomization's name (owner label)")
	namespace := flag.String("namespace", "flux-system", "the Kustomization's namespace (owner label)")
	force := flag.Bool("force", true, "recreate objects whose immutable fields changed (spec.force)")
	wait := flag.Bool("wait", true, "wait for every applied object to be ready (spec.wait)")
	timeout := flag.Duration("timeout", 60*time.Second, "apply and wait timeout (spec.timeout)")
	buildOnly := flag.Bool("build-only", false, "print the built YAML and exit")
	flag.Parse()
	if *root == "" || *path == "" || (!*buildOnly && *kubeconfig == "") {
		fmt.Fprintln(os.Stderr, "flux-apply: -root, -path and -kubeconfig (unless -build-only) are required")
		os.Exit(2)
	}
	built, err := build(*root, *path)
	if err != nil {
		fail(nil, fmt.Errorf("kustomize build failed: %w", err))
	}
	if *buildOnly {
		fmt.Print(string(built))
		return
	}
	entries, err := apply(*kubeconfig, built, *name, *namespace, *force, *wait, *timeout)
	if err != nil {
		fail(entries, err)
	}
	out, _ := json.Marshal(result{Entries: entries})
	fmt.Println(string(out))
}

func fail(entries []entry, err error) {
	out, _ := json.Marshal(result{Entries: entries, Error: err.Error()})
	fmt.Println(string(out))
	fmt.Fprintln(os.Stderr, "flux-apply:", err)
	os.Exit(1)
}

// build runs krusty with the options Flux's kustomize.Build uses: files may be loaded from
// outside the kustomization's folder (not outside the root), and only builtin plugins.
func build(root, path string) ([]byte, error) {
	abs, err := filepath.Abs(filepath.Join(root, path))
	if err != nil {
		return nil, err
	}
	rootAbs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(rootAbs, abs); err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("path %q is outside the root %q", path, root)
	}
	k := krusty.MakeKustomizer(&krusty.Options{
		LoadRestrictions: kustypes.LoadRestrictionsNone,
		PluginConfig:     kustypes.DisabledPluginConfig(),
	})
	m, err := k.Run(filesys.MakeFsOnDisk(), abs)
	if err != nil {
		return nil, err
	}
	for _, res := range m.Resources() {
		if res.GetName() == "" || res.GetKind() == "" || res.GetApiVersion() == "" {
			return nil, fmt.Errorf("failed to decode Kubernetes apiVersion, kind and name from: %v", res.String())
		}
	}
	return m.AsYaml()
}

func apply(kubeconfig string, built []byte, name, namespace string, force, wait bool,
	timeout time.Duration) ([]entry, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	kubeClient, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	poller := polling.NewStatusPoller(kubeClient, kubeClient.RESTMapper(), polling.Options{})

	objects, err := ssautil.ReadObjects(strings.NewReader(string(built)))
	if err != nil {
		return nil, err
	}
	manager := ssa.NewResourceManager(kubeClient, poller, ssa.Owner{
		Field: "kustomize-controller",
		Group: group,
	})
	manager.SetOwnerLabels(objects, name, namespace)
	if err := normalize.UnstructuredList(objects); err != nil {
		return nil, err
	}

	opts := ssa.DefaultApplyOptions()
	opts.Force = force
	opts.WaitTimeout = timeout
	opts.ExclusionSelector = map[string]string{
		group + "/reconcile": "disabled",
		group + "/ssa":       "Ignore",
	}
	opts.IfNotPresentSelector = map[string]string{group + "/ssa": "IfNotPresent"}
	opts.ForceSelector = map[string]string{group + "/force": "enabled"}
	opts.Cleanup = ssa.ApplyCleanupOptions{
		Annotations: []string{
			corev1.LastAppliedConfigAnnotation,
			group + "/checksum",
			"fluxcd.io/sync-checksum",
		},
		Labels: []string{"fluxcd.io/sync-gc-mark"},
		FieldManagers: []ssa.FieldManager{
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationApply},
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: "before-first-apply", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: "kustomize-controller", OperationType: metav1.ManagedFieldsOperationUpdate},
		},
		Exclusions: map[string]string{group + "/ssa": "Merge"},
	}

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	changeSet, err := manager.ApplyAllStaged(ctx, objects, opts)
	var entries []entry
	if changeSet != nil {
		for _, e := range changeSet.Entries {
			entries = append(entries, entry{Subject: e.Subject, Action: string(e.Action)})
		}
	}
	if err != nil {
		return entries, err
	}
	if wait {
		if err := manager.WaitForSetWithContext(ctx, changeSet.ToObjMetadataSet(), ssa.WaitOptions{
			Interval: 2 * time.Second,
			Timeout:  timeout,
			FailFast: true,
		}); err != nil {
			return entries, fmt.Errorf("health check failed: %w", err)
		}
	}
	return entries, nil
}
