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

{{/* Environment shared by the gateway and the operator: state URLs from existing Secrets. */}}
{{- define "gateway.stateEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ required "postgres.existingSecret is required: the name of a Secret holding the Postgres URL" .Values.postgres.existingSecret | quote }}
      key: {{ .Values.postgres.secretKey | quote }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ required "redis.existingSecret is required: the name of a Secret holding the Redis URL" .Values.redis.existingSecret | quote }}
      key: {{ .Values.redis.secretKey | quote }}
{{- with .Values.redis.keyPrefix }}
- name: GATEWAY_REDIS_PREFIX
  value: {{ . | quote }}
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
