package janitor

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// APIVersion and Kind identify the configuration file.
const (
	APIVersion = "pressure.kube-pressure.io/v1alpha1"
	Kind       = "JanitorConfiguration"
)

// JanitorConfiguration is the v1alpha1 file format. Every optional field is a pointer: nil means
// "not set, use the default".
type JanitorConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// Kubeconfig is the path of a kubeconfig file; empty means in-cluster configuration.
	Kubeconfig *string `json:"kubeconfig,omitempty"`
	// TTL is how long a terminal pod is kept after its eviction time; 0s deletes as soon as seen.
	TTL *metav1.Duration `json:"ttl,omitempty"`
	// KeepPerOwner is how many of the newest matching pods of each owner are never deleted.
	KeepPerOwner *int32 `json:"keepPerOwner,omitempty"`
	// Reasons lists the status.reason values of Failed pods to delete.
	Reasons []string `json:"reasons,omitempty"`
	// DeleteSucceeded also deletes Succeeded pods that are bare or owned by a Job.
	DeleteSucceeded *bool `json:"deleteSucceeded,omitempty"`
	// Namespaces restricts the janitor to these namespaces; empty means all.
	Namespaces []string `json:"namespaces,omitempty"`
	// ExcludeNamespaces are never touched.
	ExcludeNamespaces []string `json:"excludeNamespaces,omitempty"`
	// LabelSelector selects the pods the janitor may delete (label selector syntax).
	LabelSelector *string `json:"labelSelector,omitempty"`
	// RateLimit bounds deletions.
	RateLimit *RateLimit `json:"rateLimit,omitempty"`
	// Workers is the number of concurrent deletions.
	Workers *int32 `json:"workers,omitempty"`
	// DryRun logs and counts what would be deleted; it writes nothing to the cluster.
	DryRun *bool `json:"dryRun,omitempty"`
	// LeaderElection configures the Lease that makes several replicas safe.
	LeaderElection *LeaderElection `json:"leaderElection,omitempty"`
	// MetricsBindAddress serves /metrics; "0" disables it.
	MetricsBindAddress *string `json:"metricsBindAddress,omitempty"`
	// HealthProbeBindAddress serves /healthz and /readyz; "0" disables it.
	HealthProbeBindAddress *string `json:"healthProbeBindAddress,omitempty"`
	// AvoidanceWebhook serves the per-workload avoidance as a mutating admission webhook, where the
	// API server has no MutatingAdmissionPolicy v1 (Kubernetes before 1.36). Every replica serves it.
	AvoidanceWebhook *AvoidanceWebhook `json:"avoidanceWebhook,omitempty"`
}

// AvoidanceWebhook configures the avoidance webhook (internal/avoidwebhook).
type AvoidanceWebhook struct {
	// BindAddress serves the webhook over TLS; "0" (the default) disables it.
	BindAddress *string `json:"bindAddress,omitempty"`
	// CertFile and KeyFile hold the serving certificate and key (PEM), read again when they change.
	CertFile *string `json:"certFile,omitempty"`
	KeyFile  *string `json:"keyFile,omitempty"`
	// Namespace is where the agents write the avoidance ConfigMaps (the release namespace).
	Namespace *string `json:"namespace,omitempty"`
}

// RateLimit is a token bucket for deletions.
type RateLimit struct {
	// DeletionsPerSecond is the sustained rate.
	DeletionsPerSecond *float64 `json:"deletionsPerSecond,omitempty"`
	// Burst is the bucket size.
	Burst *int32 `json:"burst,omitempty"`
}

// LeaderElection configures leader election through a coordination.k8s.io Lease.
type LeaderElection struct {
	LeaderElect    *bool            `json:"leaderElect,omitempty"`
	LeaseName      *string          `json:"leaseName,omitempty"`
	LeaseNamespace *string          `json:"leaseNamespace,omitempty"`
	LeaseDuration  *metav1.Duration `json:"leaseDuration,omitempty"`
	RenewDeadline  *metav1.Duration `json:"renewDeadline,omitempty"`
	RetryPeriod    *metav1.Duration `json:"retryPeriod,omitempty"`
}
