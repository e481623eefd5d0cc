{{/* The chart's names and labels, and which shape it renders. */}}

{{- define "herald.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "herald.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "herald.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "herald.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "herald.selectorLabels" -}}
app.kubernetes.io/name: {{ include "herald.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "herald.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "herald.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* "true" when the values name a PostgreSQL database. */}}
{{- define "herald.postgres" -}}
{{- if or .Values.database.url .Values.database.existingSecret }}true{{ end }}
{{- end }}

{{/* The Secret holding HERALD_SECRET (and a given database URL). */}}
{{- define "herald.secretName" -}}
{{- include "herald.fullname" . }}
{{- end }}

{{/* The role whose pods the Service selects: api on PostgreSQL, all on SQLite. */}}
{{- define "herald.serviceRole" -}}
{{- if include "herald.postgres" . }}api{{ else }}all{{ end }}
{{- end }}
