{{/* Names and labels shared by every template. */}}

{{- define "depot.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "depot.fullname" -}}
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

{{- define "depot.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "depot.selectorLabels" -}}
app.kubernetes.io/name: {{ include "depot.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "depot.labels" -}}
helm.sh/chart: {{ include "depot.chart" . }}
{{ include "depot.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "depot.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "depot.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "depot.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The Ceph configuration ConfigMap: the user's, or the one this chart renders. */}}
{{- define "depot.cephConfigMap" -}}
{{- default (printf "%s-ceph" (include "depot.fullname" .)) .Values.storage.rados.existingConfigMap -}}
{{- end -}}

{{/*
Environment shared by depotd and the migration Job: configuration from the ConfigMap, secrets by
reference only (secretKeyRef), never as literal values.
*/}}
{{- define "depot.env" -}}
- name: DEPOT_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ required "database.existingSecret is required" .Values.database.existingSecret }}
      key: {{ .Values.database.urlKey }}
- name: DEPOT_SERVER_KEY
  valueFrom:
    secretKeyRef:
      name: {{ required "serverKey.existingSecret is required" .Values.serverKey.existingSecret }}
      key: {{ .Values.serverKey.key }}
{{- if .Values.sseMasterKey.existingSecret }}
- name: DEPOT_SSE_MASTER_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.sseMasterKey.existingSecret }}
      key: {{ .Values.sseMasterKey.key }}
{{- end }}
{{- if .Values.metrics.tokenSecret.name }}
- name: DEPOT_METRICS_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ .Values.metrics.tokenSecret.name }}
      key: {{ .Values.metrics.tokenSecret.key }}
{{- end }}
{{- end -}}

{{/* Volumes for the blob store and TLS, and their mounts (same order). */}}
{{- define "depot.volumes" -}}
{{- if eq .Values.storage.type "rados" }}
- name: ceph-conf
  configMap:
    name: {{ include "depot.cephConfigMap" . }}
- name: ceph-keyring
  secret:
    secretName: {{ required "storage.rados.keyringSecret is required" .Values.storage.rados.keyringSecret }}
    defaultMode: 0400
{{- else if eq .Values.storage.type "localfs" }}
- name: blobs
{{- if .Values.storage.localfs.existingClaim }}
  persistentVolumeClaim:
    claimName: {{ .Values.storage.localfs.existingClaim }}
{{- else }}
  emptyDir: {}
{{- end }}
{{- end }}
{{- if .Values.tls.enabled }}
- name: tls
  secret:
    secretName: {{ required "tls.existingSecret is required when tls.enabled" .Values.tls.existingSecret }}
    defaultMode: 0400
{{- end }}
{{- if gt (int64 .Values.config.cacheDiskBytes) 0 }}
- name: cache
  emptyDir:
    sizeLimit: {{ add (int64 .Values.config.cacheDiskBytes) 67108864 }}
{{- end }}
- name: tmp
  emptyDir: {}
{{- end -}}

{{- define "depot.volumeMounts" -}}
{{- if eq .Values.storage.type "rados" }}
- name: ceph-conf
  mountPath: /etc/ceph/ceph.conf
  subPath: ceph.conf
  readOnly: true
- name: ceph-keyring
  mountPath: /etc/ceph/keyring
  subPath: {{ .Values.storage.rados.keyringKey }}
  readOnly: true
{{- else if eq .Values.storage.type "localfs" }}
- name: blobs
  mountPath: /var/lib/depot/blobs
{{- end }}
{{- if .Values.tls.enabled }}
- name: tls
  mountPath: /etc/depot/tls
  readOnly: true
{{- end }}
{{- if gt (int64 .Values.config.cacheDiskBytes) 0 }}
- name: cache
  mountPath: /var/cache/depot
{{- end }}
- name: tmp
  mountPath: /tmp
{{- end -}}
