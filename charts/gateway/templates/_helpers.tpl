{{/* Chart name, or nameOverride. */}}
{{- define "gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* <release>-<name>, or just <release> when it already contains the name; fullnameOverride wins. */}}
{{- define "gateway.fullname" -}}
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

{{- define "gateway.operatorName" -}}
{{- printf "%s-operator" (include "gateway.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "gateway.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object; pass (dict "ctx" $ "component" "gateway"|"operator"). */}}
{{- define "gateway.labels" -}}
helm.sh/chart: {{ include "gateway.chart" .ctx }}
{{ include "gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
{{- end }}

{{/* Immutable selector labels; same argument as gateway.labels. */}}
{{- define "gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gateway.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "gateway.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "gateway.serviceAccountName" -}}
{{- default (include "gateway.fullname" .) .Values.gateway.serviceAccount.name }}
{{- end }}

{{- define "gateway.operatorServiceAccountName" -}}
{{- default (include "gateway.operatorName" .) .Values.operator.serviceAccount.name }}
{{- end }}

{{/* The Secret holding GATEWAY_ENCRYPTION_KEY (key `encryption-key`); created by the operator, never by the chart. */}}
{{- define "gateway.encryptionKeySecret" -}}
{{- default (printf "%s-encryption-key" (include "gateway.fullname" .)) .Values.encryptionKey.secretName }}
{{- end }}

{{/*
"true" in the external mode (Postgres and Redis from existing Secrets: several replicas, the operator, the CRDs),
empty in the embedded mode (neither Secret named: one replica on PGlite with its data on a PersistentVolumeClaim).
Naming only one of the two Secrets is an error that says what to set.
*/}}
{{- define "gateway.external" -}}
{{- $pg := .Values.postgres.existingSecret }}
{{- $redis := .Values.redis.existingSecret }}
{{- if and $pg $redis }}true
{{- else if $pg }}
{{- fail "postgres.existingSecret is set but redis.existingSecret is not: the external mode needs both (a Secret holding the Redis URL), the embedded mode neither" }}
{{- else if $redis }}
{{- fail "redis.existingSecret is set but postgres.existingSecret is not: the external mode needs both (a Secret holding the Postgres URL), the embedded mode neither" }}
{{- end }}
{{- end }}

{{/* The embedded mode's data volume claim. */}}
{{- define "gateway.dataClaim" -}}
{{- default (printf "%s-data" (include "gateway.fullname" .)) .Values.embedded.persistence.existingClaim }}
{{- end }}

{{/* Environment shared by the gateway and the operator: state URLs from existing Secrets (external mode only). */}}
{{- define "gateway.stateEnv" -}}
{{- if include "gateway.external" . }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.postgres.existingSecret | quote }}
      key: {{ .Values.postgres.secretKey | quote }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.existingSecret | quote }}
      key: {{ .Values.redis.secretKey | quote }}
{{- with .Values.redis.keyPrefix }}
- name: GATEWAY_REDIS_PREFIX
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}

{{- define "gateway.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* nodeSelector, tolerations, affinity, priorityClassName of one workload (gateway or operator values). */}}
{{- define "gateway.scheduling" -}}
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
{{- with .priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- end }}
