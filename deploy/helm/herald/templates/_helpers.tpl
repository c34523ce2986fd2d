{{/* Base name of every object: fullnameOverride, else the release name when it contains "herald", else <release>-herald. */}}
{{- define "herald.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The pod selector (immutable on a DaemonSet: keep it to the name). */}}
{{- define "herald.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "herald.labels" -}}
{{ include "herald.selectorLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Herald's image: by digest when image.digest is set (scripts/image.sh pin writes it), else by tag. */}}
{{- define "herald.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* The controller's pod selector: apart from the DaemonSet's (its selector never matches them). */}}
{{- define "herald.controllerSelectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}-controller
{{- end -}}

{{/* Labels of the controller's objects. */}}
{{- define "herald.controllerLabels" -}}
{{ include "herald.controllerSelectorLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The DaemonSet's ServiceAccount as the apiserver names its user (the admission policies match it). */}}
{{- define "herald.nodeAgentUser" -}}
system:serviceaccount:{{ .Release.Namespace }}:{{ include "herald.serviceAccountName" . }}
{{- end -}}

{{- define "herald.serviceAccountName" -}}
{{- .Values.serviceAccount.name | default (include "herald.fullname" .) -}}
{{- end -}}

{{- define "herald.bgpPasswordSecret" -}}
{{- .Values.secrets.bgpPassword.name | default (printf "%s-bgp-password" (include "herald.fullname" .)) -}}
{{- end -}}

{{- define "herald.adminTokenSecret" -}}
{{- .Values.secrets.adminToken.name | default (printf "%s-admin-token" (include "herald.fullname" .)) -}}
{{- end -}}

{{/* Where the pod mounts the bgpPassword Secret; peers read keys below it. */}}
{{- define "herald.secretsDir" -}}/etc/herald/secrets/{{- end -}}

{{/*
herald.yaml: .Values.config without its empty lists, plus the keys the chart owns (they must match the pod's
mounts and probes). Fails on a chart-owned key set by the user.
*/}}
{{- define "herald.config" -}}
{{- $cfg := dict -}}
{{- range $key, $value := .Values.config -}}
{{- if has $key (list "source" "admin" "metrics" "stateDir" "node") -}}
{{- fail (printf "config.%s is set by the chart (it must match the pod's mounts, ports and probes): remove it from your values (the ports are admin.port and metrics.port)" $key) -}}
{{- end -}}
{{- if not (or (kindIs "invalid" $value) (and (kindIs "slice" $value) (empty $value))) -}}
{{- $_ := set $cfg $key $value -}}
{{- end -}}
{{- end -}}
{{- $_ := set $cfg "source" (dict "kubernetes" (dict)) -}}
{{- $_ := set $cfg "admin" (dict "address" "127.0.0.1" "port" .Values.admin.port "tokenFile" "/etc/herald/admin/token") -}}
{{- /* No address: the node's, which the pod passes as --node-ip (status.hostIP). */ -}}
{{- $_ := set $cfg "metrics" (dict "port" .Values.metrics.port) -}}
{{- $_ := set $cfg "stateDir" "/var/lib/herald" -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* "true" when herald.yaml listens for BGP on a port below 1024 (bgp.listen.port defaults to 179). */}}
{{- define "herald.privilegedListenPort" -}}
{{- $listen := dig "bgp" "listen" "" (.Values.config | default dict) -}}
{{- if and (kindIs "map" $listen) (lt (int (dig "port" 179 $listen)) 1024) -}}true{{- end -}}
{{- end -}}

{{/* "true" when a peer reads its password from a file in the bgpPassword Secret's mount. */}}
{{- define "herald.usesPasswordSecret" -}}
{{- $dir := include "herald.secretsDir" . -}}
{{- range (.Values.config.peers | default list) -}}
{{- if hasPrefix $dir (dig "password" "file" "" .) -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{/* Checks of values that would give a pod that never starts or never drains. */}}
{{- define "herald.validate" -}}
{{- $dir := include "herald.secretsDir" . -}}
{{- range (.Values.config.peers | default list) -}}
{{- $wait := int (dig "gracefulShutdown" "waitTime" 15 .) -}}
{{- if and (dig "gracefulShutdown" "enabled" false .) (le (int $.Values.terminationGracePeriodSeconds) (add $wait 10)) -}}
{{- fail (printf "terminationGracePeriodSeconds %v must exceed peer %s's gracefulShutdown.waitTime %d plus 10 s, or the drain is cut short: raise it to %d" $.Values.terminationGracePeriodSeconds .name $wait (add $wait 11)) -}}
{{- end -}}
{{- $file := dig "password" "file" "" . -}}
{{- if and $.Values.secrets.bgpPassword.create (hasPrefix $dir $file) -}}
{{- $k := trimPrefix $dir $file -}}
{{- if not (hasKey $.Values.secrets.bgpPassword.data $k) -}}
{{- fail (printf "peer %s reads its password from %s, but secrets.bgpPassword.data has no key %q: add it (--set-file secrets.bgpPassword.data.%s=FILE)" .name $file $k $k) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and .Values.secrets.adminToken.create (not .Values.secrets.adminToken.token) -}}
{{- fail "secrets.adminToken.create is true but secrets.adminToken.token is empty: set it (--set secrets.adminToken.token=\"$(openssl rand -hex 32)\") or create the Secret yourself and set create: false" -}}
{{- end -}}
{{- end -}}
