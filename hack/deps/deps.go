//go:build tools

// Package deps pins the libraries the module builds on before every one of them has an importer,
// so that concurrent work does not race on go.mod. It is never compiled into a binary.
package deps

import (
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/testutil"
	_ "github.com/spf13/cobra"
	_ "github.com/spf13/pflag"
	_ "golang.org/x/sys/unix"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/api/policy/v1"
	_ "k8s.io/apimachinery/pkg/api/resource"
	_ "k8s.io/cli-runtime/pkg/genericclioptions"
	_ "k8s.io/cli-runtime/pkg/genericiooptions"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/tools/leaderelection"
	_ "k8s.io/client-go/tools/record"
	_ "k8s.io/client-go/util/flowcontrol"
	_ "k8s.io/component-base/featuregate"
	_ "k8s.io/klog/v2"
	_ "k8s.io/kubelet/config/v1beta1"
	_ "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	_ "k8s.io/utils/clock"
	_ "k8s.io/utils/clock/testing"
	_ "sigs.k8s.io/yaml"
)
