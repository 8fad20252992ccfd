{{/* Chart name. */}}
{{- define "pressure.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name prefix of every resource. */}}
{{- define "pressure.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "pressure.agent.fullname" -}}{{ include "pressure.fullname" . | trunc 57 | trimSuffix "-" }}-agent{{- end -}}
{{- define "pressure.janitor.fullname" -}}{{ include "pressure.fullname" . | trunc 55 | trimSuffix "-" }}-janitor{{- end -}}

{{/* Labels on every resource. */}}
{{- define "pressure.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "pressure.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: pressure
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels of one component: include with (dict "ctx" $ "component" "agent"). */}}
{{- define "pressure.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pressure.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "pressure.componentLabels" -}}
{{ include "pressure.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Image reference of one component: (dict "ctx" $ "img" .Values.agent.image). With a digest,
the reference is pinned: <repository>@sha256:... (the tag is then ignored). */}}
{{- define "pressure.image" -}}
{{- $tag := .img.tag | default .ctx.Values.image.tag | default .ctx.Chart.AppVersion -}}
{{- $repo := .img.repository -}}
{{- if .ctx.Values.image.registry -}}{{- $repo = printf "%s/%s" .ctx.Values.image.registry .img.repository -}}{{- end -}}
{{- if .img.digest -}}
{{- if not (regexMatch "^sha256:[0-9a-f]{64}$" .img.digest) -}}
{{- fail (printf "image digest %q of %s: want sha256: and 64 lowercase hex digits" .img.digest .img.repository) -}}
{{- end -}}
{{- printf "%s@%s" $repo .img.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end -}}
{{- end -}}

{{/* Values the agent's templates cannot render safely with. */}}
{{- define "pressure.agent.checkValues" -}}
{{- $a := .Values.agent -}}
{{- if not (has $a.kubeletConfig.source (list "file" "nodeProxy")) -}}
{{- fail (printf "agent.kubeletConfig.source %q: want file or nodeProxy" $a.kubeletConfig.source) -}}
{{- end -}}
{{- if not (has $a.recursiveReadOnly (list "Auto" "Enabled" "IfPossible" "Disabled")) -}}
{{- fail (printf "agent.recursiveReadOnly %q: want Auto, Enabled, IfPossible or Disabled" $a.recursiveReadOnly) -}}
{{- end -}}
{{- $root := include "pressure.agent.rootSettings" . -}}
{{- if and $root (has $a.recursiveReadOnly (list "IfPossible" "Disabled")) (not $a.insecureRootWithoutRecursiveReadOnly) -}}
{{- fail (printf "agent.recursiveReadOnly %q with %s: these run the agent as uid 0, and a mount that is not recursively read-only leaves the cgroup v1 controllers (and any volume below a mounted directory) writable to it; set agent.recursiveReadOnly=Enabled (containerd 2.0+, CRI-O 1.30+), or turn %s off on an older runtime, or accept the writable tree with agent.insecureRootWithoutRecursiveReadOnly=true (docs/security.md)" $a.recursiveReadOnly $root $root) -}}
{{- end -}}
{{- if $a.reclaim.enabled -}}
{{- if or (not $a.reclaim.podsCgroup) (contains ".." $a.reclaim.podsCgroup) (hasPrefix "/" $a.reclaim.podsCgroup) -}}
{{- fail (printf "agent.reclaim.podsCgroup %q: want the pods cgroup relative to agent.hostPaths.cgroup, e.g. memory/kubepods.slice (v1) or kubepods.slice (v2)" $a.reclaim.podsCgroup) -}}
{{- end -}}
{{- $rro := include "pressure.agent.recursiveReadOnly" . -}}
{{- if ne $rro "Enabled" -}}
{{- fail (printf "agent.reclaim.enabled=true with agent.recursiveReadOnly %q: the reclaim rung mounts the pods cgroup writable for a uid 0 agent, and only recursively read-only mounts keep every other cgroup (and every submount) read-only; set agent.recursiveReadOnly=Enabled or Auto (containerd 2.0+, CRI-O 1.30+), or leave reclaim off (agent.insecureRootWithoutRecursiveReadOnly does not lift this; docs/security.md)" $rro) -}}
{{- end -}}
{{- end -}}
{{- if and $a.notifiers.memcg.enabled (or (not $a.notifiers.memcg.podsCgroup) (contains ".." $a.notifiers.memcg.podsCgroup)) -}}
{{- fail (printf "agent.notifiers.memcg.podsCgroup %q: want the pods cgroup below the memory controller, e.g. kubepods or kubepods.slice" $a.notifiers.memcg.podsCgroup) -}}
{{- end -}}
{{- end -}}

{{/* The ServiceAccount user names the admission policies match. */}}
{{- define "pressure.agent.username" -}}system:serviceaccount:{{ .Release.Namespace }}:{{ include "pressure.agent.fullname" . }}{{- end -}}
{{- define "pressure.janitor.username" -}}system:serviceaccount:{{ .Release.Namespace }}:{{ include "pressure.janitor.fullname" . }}{{- end -}}

{{/* The settings that run the agent as uid 0, as "a=true, b=true", or "" when it runs as its non-root
user without capabilities. */}}
{{- define "pressure.agent.rootSettings" -}}
{{- $a := .Values.agent -}}
{{- $on := list -}}
{{- if $a.notifiers.memcg.enabled -}}{{- $on = append $on "agent.notifiers.memcg.enabled=true" -}}{{- end -}}
{{- if $a.cgroupKill.enabled -}}{{- $on = append $on "agent.cgroupKill.enabled=true" -}}{{- end -}}
{{- if $a.reclaim.enabled -}}{{- $on = append $on "agent.reclaim.enabled=true" -}}{{- end -}}
{{- if $a.notifiers.psi.subSecond -}}{{- $on = append $on "agent.notifiers.psi.subSecond=true" -}}{{- end -}}
{{- join ", " $on -}}
{{- end -}}

{{/* The recursiveReadOnly of the agent's host mounts: agent.recursiveReadOnly, with Auto resolved to
Enabled for a uid 0 agent and IfPossible for the non-root one. */}}
{{- define "pressure.agent.recursiveReadOnly" -}}
{{- $a := .Values.agent -}}
{{- if ne $a.recursiveReadOnly "Auto" -}}{{- $a.recursiveReadOnly -}}
{{- else if include "pressure.agent.rootSettings" . -}}Enabled
{{- else -}}IfPossible
{{- end -}}
{{- end -}}

{{/* The agent's container securityContext: values (non-root, no capability), or root (uid 0) when a
notifier or the kill rung needs it: the memcg notifier writes cgroup.event_control (root's, mode 0200:
its owner needs no capability), sub-second PSI windows need CAP_SYS_RESOURCE and the cgroup-kill rung
CAP_KILL (a non-root process gets no effective capabilities). */}}
{{- define "pressure.agent.securityContext" -}}
{{- $a := .Values.agent -}}
{{- $sc := deepCopy $a.securityContext -}}
{{- $caps := default dict $sc.capabilities -}}
{{- $add := default list $caps.add -}}
{{- if $a.cgroupKill.enabled -}}{{- $add = append $add "KILL" -}}{{- end -}}
{{- if $a.notifiers.psi.subSecond -}}{{- $add = append $add "SYS_RESOURCE" -}}{{- end -}}
{{- if include "pressure.agent.rootSettings" . -}}
{{- $_ := set $sc "runAsUser" 0 -}}
{{- $_ := set $sc "runAsGroup" 0 -}}
{{- $_ := set $sc "runAsNonRoot" false -}}
{{- end -}}
{{- if $add -}}
{{- $_ := set $caps "add" (uniq $add) -}}
{{- $_ := set $sc "capabilities" $caps -}}
{{- end -}}
{{- toYaml $sc -}}
{{- end -}}

{{/* The agent's pod securityContext: agent.podSecurityContext, plus the supplemental group 0 with
agent.podDiskUsage (listing the kubelet's pod directories, mode 0750 root:root). */}}
{{- define "pressure.agent.podSecurityContext" -}}
{{- $sc := deepCopy (default dict .Values.agent.podSecurityContext) -}}
{{- if .Values.agent.podDiskUsage.enabled -}}
{{- $groups := default list $sc.supplementalGroups -}}
{{- $has := false -}}
{{- range $groups -}}{{- if eq (toString .) "0" -}}{{- $has = true -}}{{- end -}}{{- end -}}
{{- if not $has -}}{{- $groups = append $groups 0 -}}{{- end -}}
{{- $_ := set $sc "supplementalGroups" $groups -}}
{{- end -}}
{{- toYaml $sc -}}
{{- end -}}

{{/* The host files of the memcg notifier (cgroup v1): the cgroup.event_control files of the memory
root and of the pods cgroup, each bind-mounted writable over its read-only view below /host. */}}
{{- define "pressure.agent.memcgFiles" -}}
{{- $a := .Values.agent -}}
{{- $mem := printf "%s/memory" (trimSuffix "/" $a.hostPaths.cgroup) -}}
{{- $pods := trimAll "/" $a.notifiers.memcg.podsCgroup -}}
memcg-root:
  host: {{ $mem }}/cgroup.event_control
  mount: /host/sys/fs/cgroup/memory/cgroup.event_control
memcg-pods:
  host: {{ $mem }}/{{ $pods }}/cgroup.event_control
  mount: /host/sys/fs/cgroup/memory/{{ $pods }}/cgroup.event_control
{{- end -}}

{{/* The reclaim rung's pods cgroup (agent.reclaim): the host directory and where it is mounted
writable, over its read-only view below /host. */}}
{{- define "pressure.agent.reclaimDir" -}}
{{- $a := .Values.agent -}}
{{- $pods := trimAll "/" $a.reclaim.podsCgroup -}}
host: {{ trimSuffix "/" $a.hostPaths.cgroup }}/{{ $pods }}
mount: /host/sys/fs/cgroup/{{ $pods }}
{{- end -}}

{{/* "true" when the cluster serves MutatingAdmissionPolicy v1 (Kubernetes 1.36+), else "". */}}
{{- define "pressure.agent.avoidance" -}}
{{- if or (.Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy") (semverCompare ">=1.36.0-0" .Capabilities.KubeVersion.Version) -}}true{{- end -}}
{{- end -}}

{{/* "true" when the agent runs dry (dryRun, agent.dryRun or agent.config.dryRun), else "": it then
evicts, kills, taints and annotates nothing, and the avoidance policy is not rendered. */}}
{{- define "pressure.agent.dryRun" -}}
{{- if or .Values.dryRun .Values.agent.dryRun (dig "dryRun" false (default dict .Values.agent.config)) -}}true{{- end -}}
{{- end -}}

{{/* "true" when the janitor runs dry (dryRun or janitor.config.dryRun), else "". */}}
{{- define "pressure.janitor.dryRun" -}}
{{- if or .Values.dryRun .Values.janitor.config.dryRun -}}true{{- end -}}
{{- end -}}

{{/* "true" when the avoidance MutatingAdmissionPolicy and its binding are rendered: agent, avoidance and
the agent's admission policies on, a 1.36+ cluster, and no dry-run (a dry run mutates no pod). */}}
{{- define "pressure.agent.avoidancePolicy" -}}
{{- $a := .Values.agent -}}
{{- if and $a.enabled $a.avoidance.enabled $a.admissionPolicy.enabled (include "pressure.agent.avoidance" .) (not (include "pressure.agent.dryRun" .)) -}}true{{- end -}}
{{- end -}}

{{/* "true" when the avoidance webhook is rendered instead of the policy (a cluster without
MutatingAdmissionPolicy v1): the same conditions, agent.avoidance.webhook.enabled and the janitor, whose
replicas serve it. */}}
{{- define "pressure.agent.avoidanceWebhook" -}}
{{- $a := .Values.agent -}}
{{- if and $a.enabled $a.avoidance.enabled $a.admissionPolicy.enabled $a.avoidance.webhook.enabled .Values.janitor.enabled (not (include "pressure.agent.avoidance" .)) (not (include "pressure.agent.dryRun" .)) -}}true{{- end -}}
{{- end -}}

{{/* "true" when something applies the avoidances (the policy or the webhook): then the agents write
them (their ConfigMap rights, the policies confining who writes them, loopBreaker.avoidanceNamespace). */}}
{{- define "pressure.agent.avoidanceRendered" -}}
{{- if or (include "pressure.agent.avoidancePolicy" .) (include "pressure.agent.avoidanceWebhook" .) -}}true{{- end -}}
{{- end -}}

{{/* The avoidance webhook's names: its Service and TLS Secret (janitor's), its configuration. */}}
{{- define "pressure.avoidanceWebhook.service" -}}{{ include "pressure.janitor.fullname" . }}-avoidance-webhook{{- end -}}
{{- define "pressure.avoidanceWebhook.secret" -}}{{ include "pressure.janitor.fullname" . }}-avoidance-webhook-tls{{- end -}}

{{/* Fails when a component's extraArgs turn its dry-run off while the chart turns it on: one switch
must mean what it says. Include with (dict "ctx" $ "component" "agent" "args" .Values.agent.extraArgs). */}}
{{- define "pressure.checkDryRunArgs" -}}
{{- if include (printf "pressure.%s.dryRun" .component) .ctx -}}
{{- range .args -}}
{{- if regexMatch "^--?dry-run=(?i:false|f|0)$" (toString .) -}}
{{- fail (printf "%s.extraArgs %q turns the %s's dry-run off, but dryRun (or %s's own dryRun) is true: set dryRun=false (and the component's dryRun false) to go live instead" $.component (toString .) $.component $.component) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Name of the uninstall hook's Job, ServiceAccount and RBAC (at most 63 characters). */}}
{{- define "pressure.agent.cleanupName" -}}{{ include "pressure.fullname" . | trunc 48 | trimSuffix "-" }}-agent-cleanup{{- end -}}
