{{/* Names and labels. */}}
{{- define "svc-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "svc-gateway.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* <fullname>-<component>, e.g. include "svc-gateway.component" (list . "gateway") */}}
{{- define "svc-gateway.component" -}}
{{- $ctx := index . 0 }}
{{- printf "%s-%s" (include "svc-gateway.fullname" $ctx | trunc 50 | trimSuffix "-") (index . 1) }}
{{- end }}

{{- define "svc-gateway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "svc-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: svc-gateway
{{- end }}

{{/* Labels of one component: include "svc-gateway.componentLabels" (list . "gateway") */}}
{{- define "svc-gateway.componentLabels" -}}
{{ include "svc-gateway.labels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "svc-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "svc-gateway.name" (index . 0) }}
app.kubernetes.io/instance: {{ (index . 0).Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "svc-gateway.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Where each connection setting lives: the user's Secret, or the chart's. */}}
{{- define "svc-gateway.connectionSecret" -}}
{{- include "svc-gateway.component" (list . "connections") }}
{{- end }}

{{- define "svc-gateway.redisSecretRef" -}}
{{- if .Values.redis.existingSecret -}}
name: {{ .Values.redis.existingSecret }}
key: {{ .Values.redis.existingSecretKey }}
{{- else -}}
name: {{ include "svc-gateway.connectionSecret" . }}
key: redis-url
{{- end }}
{{- end }}

{{- define "svc-gateway.postgresEnabled" -}}
{{- if or .Values.postgres.url .Values.postgres.existingSecret .Values.postgres.deploy }}true{{ end }}
{{- end }}

{{- define "svc-gateway.postgresSecretRef" -}}
{{- if .Values.postgres.existingSecret -}}
name: {{ .Values.postgres.existingSecret }}
key: {{ .Values.postgres.existingSecretKey }}
{{- else if .Values.postgres.deploy -}}
name: {{ include "svc-gateway.component" (list . "postgres") }}
key: url
{{- else -}}
name: {{ include "svc-gateway.connectionSecret" . }}
key: postgres-url
{{- end }}
{{- end }}

{{- define "svc-gateway.pepperSecretRef" -}}
{{- if .Values.pepper.existingSecret -}}
name: {{ .Values.pepper.existingSecret }}
key: {{ .Values.pepper.existingSecretKey }}
{{- else -}}
name: {{ include "svc-gateway.component" (list . "pepper") }}
key: pepper
{{- end }}
{{- end }}

{{/* The Redis URL kept in the chart's Secret: one URL, or a Redis Cluster's seed nodes joined by commas. */}}
{{- define "svc-gateway.redisUrl" -}}
{{- if .Values.redis.clusterNodes -}}
{{ join "," .Values.redis.clusterNodes }}
{{- else if .Values.redis.deploy -}}
{{ printf "redis://%s:6379" (include "svc-gateway.component" (list . "redis")) }}
{{- else -}}
{{ .Values.redis.url }}
{{- end -}}
{{- end }}

{{/* Environment every component shares: Redis (one server or a Cluster's seed nodes) and its key prefix. */}}
{{- define "svc-gateway.redisEnv" -}}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      {{- include "svc-gateway.redisSecretRef" . | nindent 6 }}
{{- if or .Values.redis.clusterNodes .Values.redis.cluster }}
- name: SVC_REDIS_CLUSTER
  value: "1"
{{- end }}
- name: SVC_REDIS_PREFIX
  value: {{ .Values.redis.prefix | quote }}
{{- end }}

{{- define "svc-gateway.pepperEnv" -}}
- name: SVC_KEY_PEPPER
  valueFrom:
    secretKeyRef:
      {{- include "svc-gateway.pepperSecretRef" . | nindent 6 }}
{{- end }}

{{/* Pod scheduling settings of one component's values: include "svc-gateway.scheduling" .Values.gateway */}}
{{- define "svc-gateway.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Changes when a connection setting given in values changes, so pods restart with it (a Secret of yours: restart them yourself). */}}
{{- define "svc-gateway.connectionsChecksum" -}}
{{- printf "%s|%s|%s|%s|%s|%v" (include "svc-gateway.redisUrl" .) .Values.redis.existingSecret .Values.postgres.url .Values.postgres.existingSecret .Values.pepper.existingSecret .Values.postgres.deploy | sha256sum | trunc 16 }}
{{- end }}

{{/* NetworkPolicy peers allowed on the metrics ports: networkPolicy.metricsFrom, else any pod of any namespace of the
cluster (a namespaceSelector matching every namespace), which excludes sources outside the cluster. */}}
{{- define "svc-gateway.metricsFrom" -}}
{{- with .Values.networkPolicy.metricsFrom }}
{{- toYaml . }}
{{- else }}
- namespaceSelector: {}
{{- end }}
{{- end }}

{{/*
OpenTelemetry tracing (README: Traces): the standard OTEL_* variables when otel.endpoint is set, nothing otherwise.
service.name per component; k8s.* resource attributes from the downward API. Call with (dict "root" . "component" name).
*/}}
{{- define "svc-gateway.otelEnv" -}}
{{- $o := .root.Values.otel -}}
{{- if $o.endpoint -}}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ $o.endpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ $o.protocol | default "http/protobuf" | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ printf "svc-%s" .component | quote }}
- name: OTEL_TRACES_SAMPLER
  value: {{ $o.sampler | quote }}
{{- if ne (toString $o.samplerArg) "" }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ $o.samplerArg | toString | quote }}
{{- end }}
{{- with $o.headersSecret }}
- name: OTEL_EXPORTER_OTLP_HEADERS
  valueFrom: { secretKeyRef: { name: {{ .name | quote }}, key: {{ .key | quote }} } }
{{- end }}
- name: K8S_POD_NAME
  valueFrom: { fieldRef: { fieldPath: metadata.name } }
- name: K8S_NAMESPACE_NAME
  valueFrom: { fieldRef: { fieldPath: metadata.namespace } }
- name: K8S_NODE_NAME
  valueFrom: { fieldRef: { fieldPath: spec.nodeName } }
{{- $attrs := list "k8s.pod.name=$(K8S_POD_NAME)" "k8s.namespace.name=$(K8S_NAMESPACE_NAME)" "k8s.node.name=$(K8S_NODE_NAME)" (printf "k8s.container.name=%s" .component) (printf "service.version=%s" .root.Chart.AppVersion) }}
{{- range $k, $v := $o.resourceAttributes }}
{{- $attrs = append $attrs (printf "%s=%s" $k $v) }}
{{- end }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ join "," $attrs | quote }}
{{- end -}}
{{- end }}

{{/*
The V8 heap limit for a container of a component's values (include "svc-gateway.heapEnv" .Values.operator): 60% of
its memory limit when that is given in Mi or Gi. Node sizes its heap from the limit with a floor of about 256 MB,
above a 256Mi limit itself, so without this the kernel kills the process for memory before V8 collects harder.
*/}}
{{- define "svc-gateway.heapEnv" -}}
{{- $limit := toString (dig "resources" "limits" "memory" "" .) -}}
{{- $mib := 0 -}}
{{- if regexMatch "^[0-9]+Gi$" $limit -}}
{{- $mib = mul (trimSuffix "Gi" $limit | atoi) 1024 -}}
{{- else if regexMatch "^[0-9]+Mi$" $limit -}}
{{- $mib = trimSuffix "Mi" $limit | atoi -}}
{{- end -}}
{{- if gt (int $mib) 0 -}}
- name: NODE_OPTIONS
  value: "--max-old-space-size={{ div (mul $mib 3) 5 }}"
{{- end -}}
{{- end }}
