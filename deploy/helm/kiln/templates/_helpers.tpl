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

{{/* Fails the render when kilnd would serve a reachable port without TLS and
credentials and daemon.insecure does not say so explicitly. */}}
{{- define "kiln.checkSecurity" -}}
{{- $tls := .Values.tls.existingSecret -}}
{{- $creds := or .Values.auth.tokensSecret .Values.tls.clientCertificates -}}
{{- if and (not .Values.daemon.insecure) (not (and $tls $creds)) -}}
{{- fail "kilnd listens on the pod network: set tls.existingSecret and credentials (auth.tokensSecret or tls.clientCertificates), or daemon.insecure=true to accept that anyone who reaches the port can run code on the agents (docs/security.md)" -}}
{{- end -}}
{{- if and .Values.auth.agentTokensSecret (not $tls) -}}
{{- fail "auth.agentTokensSecret needs tls.existingSecret: agents refuse to send a token in the clear off their machine" -}}
{{- end -}}
{{- if and .Values.tls.clientCertificates (not $tls) -}}
{{- fail "tls.clientCertificates needs tls.existingSecret (client certificates are checked against its ca.crt)" -}}
{{- end -}}
{{- end -}}

{{/* kilnd's liveness/readiness check: gRPC health on plaintext ports; with
TLS, GET /healthz on the metrics port (503 while draining), or the TCP port
when metrics are off. */}}
{{- define "kiln.probe" -}}
{{- if not .Values.tls.existingSecret -}}
grpc:
  port: {{ .Values.daemon.grpcPort }}
{{- else if .Values.metrics.enabled -}}
httpGet:
  path: /healthz
  port: {{ .Values.metrics.port }}
{{- else -}}
tcpSocket:
  port: {{ .Values.daemon.grpcPort }}
{{- end -}}
{{- end -}}

{{/* The shared tier's URL: remoteCache.url, else the chart's bazel-remote
when enabled, else "" (local only). */}}
{{- define "kiln.remoteCacheUrl" -}}
{{- if .Values.remoteCache.url -}}
{{- .Values.remoteCache.url -}}
{{- else if .Values.bazelRemote.enabled -}}
grpc://{{ include "kiln.fullname" . }}-bazel-remote:{{ .Values.bazelRemote.grpcPort }}
{{- end -}}
{{- end -}}

{{/* Fails the render for a scale-out that cannot work: several replicas
without the shared tier (each would compile everything itself) or on one
ReadWriteOnce volume (only one pod could mount it). */}}
{{- define "kiln.checkScaleOut" -}}
{{- if gt (int .Values.daemon.replicas) 1 -}}
{{- if not (include "kiln.remoteCacheUrl" .) -}}
{{- fail "daemon.replicas > 1 needs the shared cache tier: set remoteCache.url or bazelRemote.enabled=true (docs/operations.md, Scaling out)" -}}
{{- end -}}
{{- if .Values.cache.persistence.enabled -}}
{{- fail "daemon.replicas > 1 cannot share cache.persistence's volume: turn it off (each replica's disk is only its first tier; the shared tier keeps the cache)" -}}
{{- end -}}
{{- end -}}
{{- end -}}
