{{/* Names, labels and the shared pieces of every pod. */}}

{{- define "lorebase.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "lorebase.fullname" -}}
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

{{/* A component's object name: <fullname>-<component>. Argument: (dict "root" $ "name" "keeper"). */}}
{{- define "lorebase.componentName" -}}
{{- printf "%s-%s" (include "lorebase.fullname" .root | trunc 50 | trimSuffix "-") .name }}
{{- end }}

{{- define "lorebase.selectorLabels" -}}
app.kubernetes.io/name: {{ include "lorebase.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "lorebase.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "lorebase.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: lorebase
{{- end }}

{{/* Labels of a component's objects. Argument: (dict "root" $ "name" "keeper"). */}}
{{- define "lorebase.componentLabels" -}}
{{ include "lorebase.labels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end }}

{{- define "lorebase.componentSelector" -}}
{{ include "lorebase.selectorLabels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end }}

{{- define "lorebase.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "lorebase.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "lorebase.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The chart's own Secret: the URLs and keys not taken from an existingSecret. */}}
{{- define "lorebase.secretName" -}}
{{- printf "%s-secrets" (include "lorebase.fullname" .) }}
{{- end }}

{{/*
The environment every Lorebase container gets: the settings file, the data dir under /tmp and each
URL and key from its Secret (the chart's, or the existingSecret named in values).
*/}}
{{- define "lorebase.secretEnv" -}}
{{- $root := .root }}
{{- $secret := include "lorebase.secretName" $root -}}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      {{- if .existing.name }}
      name: {{ .existing.name }}
      key: {{ .existing.key }}
      {{- else }}
      name: {{ $secret }}
      key: {{ .key }}
      {{- end }}
{{- end }}

{{/* Where the gateway reaches a gRPC service: its headless Service, one address per ready pod. */}}
{{- define "lorebase.serviceAddress" -}}
{{- $c := index .root.Values .name }}
{{- printf "%s.%s.svc.%s:%d" (include "lorebase.componentName" .) .root.Release.Namespace .root.Values.clusterDomain (int $c.port) }}
{{- end }}

{{- define "lorebase.env" -}}
- name: LOREBASE_CONFIG
  value: {{ .Values.configPath | quote }}
- name: LOREBASE_DATA_DIR
  value: /tmp/lorebase
- name: PYTHONUNBUFFERED
  value: "1"
{{ include "lorebase.secretEnv" (dict "root" . "env" "LOREBASE_DATABASE_URL" "key" "database-url" "existing" .Values.database.existingSecret) }}
{{- include "lorebase.databaseCaEnv" . }}
{{ include "lorebase.secretEnv" (dict "root" . "env" "LOREBASE_NATS_URL" "key" "nats-url" "existing" .Values.externalNats.existingSecret) }}
{{ include "lorebase.secretEnv" (dict "root" . "env" "LOREBASE_ADMIN_KEY" "key" "admin-key" "existing" .Values.admin.existingSecret) }}
{{ include "lorebase.secretEnv" (dict "root" . "env" "LOREBASE_WEBHOOKS__ENCRYPTION_KEY" "key" "webhooks-encryption-key" "existing" .Values.webhooks.existingSecret) }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Scheduling shared by every component, a component's own value first. */}}
{{- define "lorebase.scheduling" -}}
{{- $root := .root }}
{{- $c := .component }}
{{- with (default $root.Values.nodeSelector $c.nodeSelector) }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $root.Values.tolerations $c.tolerations) }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $root.Values.affinity $c.affinity) }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $root.Values.topologySpreadConstraints $c.topologySpreadConstraints) }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- define "lorebase.tmpVolume" -}}
- name: tmp
  emptyDir:
    {{- with .Values.tmpVolume.sizeLimit }}
    sizeLimit: {{ . }}
    {{- end }}
{{- end }}

{{/* The PostgreSQL CA (database.caCertificate): its volume, mount and PGSSLROOTCERT, or nothing. */}}
{{- define "lorebase.databaseCaVolume" -}}
{{- $ca := .Values.database.caCertificate }}
{{- if $ca.secretName }}
- name: postgres-ca
  secret:
    secretName: {{ $ca.secretName }}
    items:
      - {key: {{ $ca.key }}, path: ca.crt}
{{- else if $ca.configMapName }}
- name: postgres-ca
  configMap:
    name: {{ $ca.configMapName }}
    items:
      - {key: {{ $ca.key }}, path: ca.crt}
{{- end }}
{{- end }}

{{- define "lorebase.databaseCaMount" -}}
{{- if or .Values.database.caCertificate.secretName .Values.database.caCertificate.configMapName }}
- {name: postgres-ca, mountPath: /etc/lorebase/postgres-ca, readOnly: true}
{{- end }}
{{- end }}

{{- define "lorebase.databaseCaEnv" -}}
{{- if or .Values.database.caCertificate.secretName .Values.database.caCertificate.configMapName }}
- name: PGSSLROOTCERT
  value: /etc/lorebase/postgres-ca/ca.crt
{{- end }}
{{- end }}
