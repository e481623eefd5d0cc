{{/*
One Deployment of `herald serve --role ROLE`: "api" and "worker" on
PostgreSQL, "all" (one pod, SQLite on a volume) otherwise.
*/}}
{{- define "herald.deployment" -}}
{{- $ := .root }}
{{- $name := include "herald.fullname" $ }}
{{- if ne .role "all" }}{{ $name = printf "%s-%s" $name .role }}{{ end }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  labels:
    {{- include "herald.labels" $ | nindent 4 }}
    app.kubernetes.io/component: {{ .role }}
spec:
  replicas: {{ .replicas }}
  {{- if eq .role "all" }}
  # SQLite is one process's database, on a ReadWriteOnce volume: the old pod
  # stops before the new one starts.
  strategy:
    type: Recreate
  {{- end }}
  selector:
    matchLabels:
      {{- include "herald.selectorLabels" $ | nindent 6 }}
      app.kubernetes.io/component: {{ .role }}
  template:
    metadata:
      labels:
        {{- include "herald.selectorLabels" $ | nindent 8 }}
        app.kubernetes.io/component: {{ .role }}
        {{- with $.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $.Values.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      {{- with $.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $.Values.podSecurityContext | nindent 8 }}
      containers:
        - name: herald
          image: "{{ $.Values.image.repository }}:{{ $.Values.image.tag | default $.Chart.AppVersion }}"
          imagePullPolicy: {{ $.Values.image.pullPolicy }}
          args: ["serve", "--role", {{ .role | quote }}]
          env:
            - name: HERALD_ADDR
              value: "0.0.0.0:3000"
            - name: HERALD_DATA_DIR
              value: /data
            - name: HERALD_SECRET
              valueFrom:
                secretKeyRef:
                  name: {{ $.Values.secret.existingSecret | default (include "herald.secretName" $) }}
                  key: {{ ternary $.Values.secret.existingSecretKey "secret" (not (empty $.Values.secret.existingSecret)) }}
            {{- if include "herald.postgres" $ }}
            - name: HERALD_DATABASE_URL
              valueFrom:
                secretKeyRef:
                  name: {{ $.Values.database.existingSecret | default (include "herald.secretName" $) }}
                  key: {{ ternary $.Values.database.existingSecretKey "database-url" (not (empty $.Values.database.existingSecret)) }}
            {{- end }}
            {{- with $.Values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          ports:
            - name: http
              containerPort: 3000
              protocol: TCP
          # /health answers 200 while the database answers. Migrations run
          # before the listener opens: the startup probe gives them 5 minutes.
          startupProbe:
            httpGet:
              path: /health
              port: http
            periodSeconds: 5
            failureThreshold: 60
          readinessProbe:
            httpGet:
              path: /health
              port: http
            periodSeconds: 5
            timeoutSeconds: 5
            failureThreshold: 2
          livenessProbe:
            httpGet:
              path: /health
              port: http
            periodSeconds: 10
            timeoutSeconds: 5
            failureThreshold: 6
          securityContext:
            {{- toYaml $.Values.securityContext | nindent 12 }}
          {{- with .resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          volumeMounts:
            - name: data
              mountPath: /data
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: data
          {{- if eq .role "all" }}
          persistentVolumeClaim:
            claimName: {{ $.Values.persistence.existingClaim | default (printf "%s-data" (include "herald.fullname" $)) }}
          {{- else }}
          emptyDir: {}
          {{- end }}
        - name: tmp
          emptyDir: {}
      {{- with $.Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $.Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $.Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{ end }}
