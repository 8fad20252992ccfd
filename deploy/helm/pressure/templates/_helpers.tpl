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

{{/* Image reference of one component: (dict "ctx" $ "img" .Values.agent.image). */}}
{{- define "pressure.image" -}}
{{- $tag := .img.tag | default .ctx.Values.image.tag | default .ctx.Chart.AppVersion -}}
{{- if .ctx.Values.image.registry -}}
{{- printf "%s/%s:%s" .ctx.Values.image.registry .img.repository $tag -}}
{{- else -}}
{{- printf "%s:%s" .img.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* The ServiceAccount user names the admission policies match. */}}
{{- define "pressure.agent.username" -}}system:serviceaccount:{{ .Release.Namespace }}:{{ include "pressure.agent.fullname" . }}{{- end -}}
{{- define "pressure.janitor.username" -}}system:serviceaccount:{{ .Release.Namespace }}:{{ include "pressure.janitor.fullname" . }}{{- end -}}

{{/* The agent's container securityContext: values, plus CAP_KILL for the cgroup-kill rung. */}}
{{- define "pressure.agent.securityContext" -}}
{{- $sc := deepCopy .Values.agent.securityContext -}}
{{- if .Values.agent.cgroupKill.enabled -}}
{{- $caps := default dict $sc.capabilities -}}
{{- $add := default list $caps.add -}}
{{- if not (has "KILL" $add) -}}{{- $add = append $add "KILL" -}}{{- end -}}
{{- $_ := set $caps "add" $add -}}
{{- $_ := set $sc "capabilities" $caps -}}
{{- end -}}
{{- toYaml $sc -}}
{{- end -}}

{{/* "true" when the cluster serves MutatingAdmissionPolicy v1 (Kubernetes 1.36+), else "". */}}
{{- define "pressure.agent.avoidance" -}}
{{- if or (.Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy") (semverCompare ">=1.36.0-0" .Capabilities.KubeVersion.Version) -}}true{{- end -}}
{{- end -}}
