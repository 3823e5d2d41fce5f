{{/* Names and labels shared by every template of the kiln chart. */}}

{{- define "kiln.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kiln.fullname" -}}
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

{{- define "kiln.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "kiln.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels; call with (dict "root" $ "component" "kilnd"). */}}
{{- define "kiln.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kiln.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* host:port of kilnd's gRPC Service, as agents dial it. */}}
{{- define "kiln.daemonAddress" -}}
{{ include "kiln.fullname" . }}.{{ .Release.Namespace }}.svc:{{ .Values.daemon.grpcPort }}
{{- end -}}

{{- define "kiln.cacheClaim" -}}
{{- default (printf "%s-cache" (include "kiln.fullname" .)) .Values.cache.persistence.existingClaim -}}
{{- end -}}
