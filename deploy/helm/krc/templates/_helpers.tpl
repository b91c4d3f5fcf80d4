{{/* Chart name, at most 63 characters. */}}
{{- define "krc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name of the release's objects: RELEASE-krc, or RELEASE when it already contains krc. */}}
{{- define "krc.fullname" -}}
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

{{- define "krc.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "krc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "krc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "krc.labels" -}}
helm.sh/chart: {{ include "krc.chart" . }}
{{ include "krc.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "krc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "krc.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
history.database.url once checked: a PostgreSQL URL without a password (the URL goes into a
ConfigMap and the pod spec; the password comes from history.database.passwordSecret), "" when
unset.
*/}}
{{- define "krc.databaseUrl" -}}
{{- $url := toString (((.Values.history).database).url | default "") -}}
{{- if $url -}}
{{- if not (regexMatch "^postgres(ql)?://" $url) -}}
{{- fail (printf "history.database.url must be a PostgreSQL URL (postgres://USER@HOST:PORT/DB), not %q; for SQLite leave it empty" (regexReplaceAll "://[^/@]*@" $url "://...@")) -}}
{{- end -}}
{{- if or (regexMatch "^postgres(ql)?://[^/?#@]*:[^/?#]*@" $url) (regexMatch "[?&]password=" $url) -}}
{{- fail "history.database.url holds a password: remove it from the URL and put it in the Secret of history.database.passwordSecret" -}}
{{- end -}}
{{- if .Values.persistence.enabled -}}
{{- fail "persistence.enabled with history.database.url: the history is in PostgreSQL, no volume is needed; turn persistence off" -}}
{{- end -}}
{{- end -}}
{{- $url -}}
{{- end -}}

{{/* "true" when leader election is on: leaderElection.enabled, or more than one replica. */}}
{{- define "krc.leaderElection" -}}
{{- if or .Values.leaderElection.enabled (gt (int .Values.replicaCount) 1) -}}true{{- end -}}
{{- end -}}

{{/* "true" when krc writes the RestartDiagnosed Event on restarted pods: the value
kubernetesEvents (default true) and config.kubernetesEvents are not false. RBAC then grants
create on events.k8s.io events; otherwise krc is told so (KRC_KUBERNETES_EVENTS=false). */}}
{{- define "krc.kubernetesEvents" -}}
{{- $v := .Values.kubernetesEvents -}}
{{- $c := get (.Values.config | default dict) "kubernetesEvents" -}}
{{- if and (ne (toString $v) "false") (ne (toString $c) "false") -}}true{{- end -}}
{{- end -}}

{{/* "true" when change tracking is on: trackChanges (default true) and
config.trackChanges are not false. RBAC then grants list and watch on the workload
controllers and nodes; otherwise krc is told so (KRC_TRACK_CHANGES=false). */}}
{{- define "krc.trackChanges" -}}
{{- $v := .Values.trackChanges -}}
{{- $c := get (.Values.config | default dict) "trackChanges" -}}
{{- if and (ne (toString $v) "false") (ne (toString $c) "false") -}}true{{- end -}}
{{- end -}}

{{/* "true" when krc reads crashing pods' ConfigMap/Secret metadata: trackConfigChanges or
config.trackConfigChanges is true, with change tracking on. RBAC then grants get on configmaps
and secrets, and krc is told (KRC_TRACK_CONFIG_CHANGES=true). */}}
{{- define "krc.trackConfigChanges" -}}
{{- $v := .Values.trackConfigChanges -}}
{{- $c := get (.Values.config | default dict) "trackConfigChanges" -}}
{{- if and (include "krc.trackChanges" .) (or (eq (toString $v) "true") (eq (toString $c) "true")) -}}true{{- end -}}
{{- end -}}

{{- define "krc.leaseName" -}}
{{- default (include "krc.fullname" .) .Values.leaderElection.leaseName -}}
{{- end -}}

{{/* "true" when the value is set: not null and not the empty string (0 and false are set). */}}
{{- define "krc.isSet" -}}
{{- if and (not (kindIs "invalid" .)) (ne (toString .) "") -}}true{{- end -}}
{{- end -}}

{{/* A string or a list as the comma-separated string the Go tool's variables take. */}}
{{- define "krc.csv" -}}
{{- if kindIs "slice" . -}}
{{- join "," . -}}
{{- else if not (kindIs "invalid" .) -}}
{{- toString . -}}
{{- end -}}
{{- end -}}

{{/*
A whole number as decimal digits. Helm reads values files into float64, and a float64 prints
as 1e+06 from one million on; krc wants digits. A fraction is an error; a string is passed on
for krc to validate (krc refuses a bad value at start-up, naming the variable).
Argument: (list "muteSeconds" VALUE).
*/}}
{{- define "krc.integer" -}}
{{- $name := index . 0 -}}
{{- $v := index . 1 -}}
{{- if or (kindIs "float64" $v) (kindIs "float32" $v) -}}
{{- if ne (float64 (int64 $v)) (float64 $v) -}}
{{- fail (printf "%s must be a whole number, not %v" $name $v) -}}
{{- end -}}
{{- int64 $v -}}
{{- else -}}
{{- toString $v -}}
{{- end -}}
{{- end -}}

{{/*
The watched namespaces as a JSON list when every entry is a plain namespace name (krc then
watches each with namespaced requests, so namespaced Roles suffice); empty otherwise (nothing
watched = all namespaces, or a regular expression among them: a ClusterRole is needed).
"Plain" is krc's own rule (src/filter.c): only a-z, 0-9 and "-". The top-level value wins over
config.watchedNamespaces, as the environment variable wins over the file in krc.
*/}}
{{- define "krc.plainWatchedNamespaces" -}}
{{- $raw := include "krc.csv" .Values.watchedNamespaces -}}
{{- if and (eq $raw "") (hasKey .Values.config "watchedNamespaces") -}}
{{- $raw = include "krc.csv" (get .Values.config "watchedNamespaces") -}}
{{- end -}}
{{- $names := list -}}
{{- $plain := true -}}
{{- range splitList "," $raw -}}
{{- $n := trim . -}}
{{- if $n -}}
{{- if regexMatch "^[a-z0-9-]+$" $n -}}
{{- $names = append $names $n -}}
{{- else -}}
{{- $plain = false -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and $plain $names -}}
{{- $names | uniq | toJson -}}
{{- end -}}
{{- end -}}

{{/* Name of the Secret with the chart-managed Slack credentials. */}}
{{- define "krc.secretName" -}}
{{- include "krc.fullname" . -}}
{{- end -}}

{{/* "true" when the chart creates its Secret (a credential given inline, not by reference). */}}
{{- define "krc.createSecret" -}}
{{- if or (and .Values.slackWebhookUrl (not .Values.slackWebhookUrlSecretKeyRef)) (and .Values.slackBotToken (not .Values.slackBotTokenSecretKeyRef)) -}}true{{- end -}}
{{- end -}}

{{/*
The krc configuration file: .Values.config with the chart's db default; refuses what belongs
elsewhere (listen is fixed by the probes and the Service, secrets do not go in a ConfigMap).
*/}}
{{- define "krc.configFile" -}}
{{- $cfg := deepCopy .Values.config -}}
{{- if hasKey $cfg "listen" -}}
{{- fail "config.listen: the chart's probes and Service use 0.0.0.0:8080; do not set listen" -}}
{{- end -}}
{{- range $k := list "slackWebhookUrl" "slackBotToken" -}}
{{- if hasKey $cfg $k -}}
{{- fail (printf "config.%s: a secret does not belong in a ConfigMap; use the value %s or %sSecretKeyRef" $k $k $k) -}}
{{- end -}}
{{- end -}}
{{- range $i, $r := (get $cfg "routes" | default list) -}}
{{- if and (kindIs "map" $r) (hasKey $r "webhookUrl") -}}
{{- fail (printf "config.routes[%d].webhookUrl: a secret does not belong in a ConfigMap; use webhookUrlEnv and extraEnv with a secretKeyRef" $i) -}}
{{- end -}}
{{- end -}}
{{- if hasKey $cfg "destinations" -}}
{{- fail "config.destinations: use the value destinations (its secrets come from Secrets, mounted as files)" -}}
{{- end -}}
{{- with .Values.destinations -}}
{{- $_ := set $cfg "destinations" (include "krc.destinations" $ | fromYamlArray) -}}
{{- end -}}
{{- with include "krc.databaseUrl" . -}}
{{- if hasKey $cfg "db" -}}
{{- fail "config.db and history.database.url both set: keep one (history.database.url for PostgreSQL)" -}}
{{- end -}}
{{- if hasKey $cfg "dbPasswordFile" -}}
{{- fail "config.dbPasswordFile: the chart mounts history.database.passwordSecret and sets it; remove config.dbPasswordFile" -}}
{{- end -}}
{{- $_ := set $cfg "db" . -}}
{{- end -}}
{{- if not (hasKey $cfg "db") -}}
{{- $_ := set $cfg "db" "/var/lib/krc/krc.db" -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/*
The secrets a destination may take, each from a Secret mounted as a file (krc.destinations,
the deployment's volumes).
*/}}
{{- define "krc.destinationSecrets" -}}
url routingKey secret headers token
{{- end -}}

{{/*
The destinations of the config file: the plain fields as given, each secret as <stem>File, the
path where the deployment mounts its Secret key. Inline secrets are refused.
*/}}
{{- define "krc.destinations" -}}
{{- $out := list -}}
{{- range $i, $d := .Values.destinations -}}
{{- if not (kindIs "map" $d) -}}
{{- fail (printf "destinations[%d] must be a mapping (name, type, ...)" $i) -}}
{{- end -}}
{{- $name := required (printf "destinations[%d].name is required" $i) (get $d "name") -}}
{{- $type := required (printf "destinations[%d].type is required" $i) (get $d "type") -}}
{{- $e := dict "name" $name "type" $type -}}
{{- range $k := list "default" "channel" "apiUrl" -}}
{{- if hasKey $d $k -}}
{{- $_ := set $e $k (get $d $k) -}}
{{- end -}}
{{- end -}}
{{- if and (hasKey $d "url") (has $type (list "slack-webhook" "teams" "google-chat")) -}}
{{- fail (printf "destinations[%d].url: a %s URL is a secret; use urlSecretKeyRef" $i $type) -}}
{{- end -}}
{{- if hasKey $d "url" -}}
{{- $_ := set $e "url" (get $d "url") -}}
{{- end -}}
{{- range $k := list "routingKey" "secret" "token" "headers" -}}
{{- if hasKey $d $k -}}
{{- fail (printf "destinations[%d].%s: a secret does not belong in values; use %sSecretKeyRef" $i $k $k) -}}
{{- end -}}
{{- end -}}
{{- range $stem := splitList " " (include "krc.destinationSecrets" $) -}}
{{- $ref := get $d (printf "%sSecretKeyRef" $stem) -}}
{{- if $ref -}}
{{- $_ := set $e (printf "%sFile" $stem) (printf "/etc/krc-destinations/%s-%s/value" $name (lower $stem)) -}}
{{- end -}}
{{- end -}}
{{- $out = append $out $e -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
The container's environment: the Go tool's variables for the values that are set, the Slack
credentials from a Secret, and the Lease identity with leader election.
*/}}
{{- define "krc.env" -}}
{{- $leader := include "krc.leaderElection" . -}}
# The history database of the config file (the image sets KRC_DB, which would win over it).
- name: KRC_DB
  value: {{ get (include "krc.configFile" . | fromYaml) "db" | quote }}
{{- if $leader }}
# Holder identity and namespace of the Lease.
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- end }}
{{- if not (include "krc.kubernetesEvents" .) }}
# kubernetesEvents is off: no RestartDiagnosed Event (and no RBAC for one).
- name: KRC_KUBERNETES_EVENTS
  value: "false"
{{- end }}
{{- if not (include "krc.trackChanges" .) }}
# trackChanges is off: no watches of the workload controllers and nodes (and no RBAC for them).
- name: KRC_TRACK_CHANGES
  value: "false"
{{- end }}
{{- if include "krc.trackConfigChanges" . }}
# trackConfigChanges: the metadata of a crashing pod's ConfigMaps and Secrets (get on them).
- name: KRC_TRACK_CONFIG_CHANGES
  value: "true"
{{- end }}
{{- if include "krc.isSet" .Values.clusterName }}
- name: CLUSTER_NAME
  value: {{ .Values.clusterName | toString | quote }}
{{- end }}
{{- if .Values.slackWebhookUrlSecretKeyRef }}
- name: SLACK_WEBHOOK_URL
  valueFrom:
    secretKeyRef:
      name: {{ required "slackWebhookUrlSecretKeyRef.name is required" (get .Values.slackWebhookUrlSecretKeyRef "name") | quote }}
      key: {{ required "slackWebhookUrlSecretKeyRef.key is required" (get .Values.slackWebhookUrlSecretKeyRef "key") | quote }}
{{- else if .Values.slackWebhookUrl }}
- name: SLACK_WEBHOOK_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "krc.secretName" . | quote }}
      key: slackWebhookUrl
{{- end }}
{{- if and (include "krc.databaseUrl" .) (((.Values.history).database).passwordSecret).name }}
# The PostgreSQL password: the mounted Secret (volume db-password).
- name: KRC_DB_PASSWORD_FILE
  value: /etc/krc-db/password
{{- end }}
{{- if (.Values.mcpTokenSecretKeyRef).name }}
# /mcp with the token of the mounted Secret (volume mcp-token).
- name: KRC_MCP_TOKEN_FILE
  value: /etc/krc-mcp/token
{{- end }}
{{- with include "krc.csv" .Values.mcpNamespaces }}
# What /mcp answers about, within the filters (docs/mcp.md, "Scope").
- name: KRC_MCP_NAMESPACES
  value: {{ . | quote }}
{{- end }}
{{- if .Values.slackBotTokenSecretKeyRef }}
- name: SLACK_BOT_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ required "slackBotTokenSecretKeyRef.name is required" (get .Values.slackBotTokenSecretKeyRef "name") | quote }}
      key: {{ required "slackBotTokenSecretKeyRef.key is required" (get .Values.slackBotTokenSecretKeyRef "key") | quote }}
{{- else if .Values.slackBotToken }}
- name: SLACK_BOT_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "krc.secretName" . | quote }}
      key: slackBotToken
{{- end }}
{{- if include "krc.isSet" .Values.slackChannel }}
- name: SLACK_CHANNEL
  value: {{ .Values.slackChannel | toString | quote }}
{{- end }}
{{- if include "krc.isSet" .Values.slackUsername }}
- name: SLACK_USERNAME
  value: {{ .Values.slackUsername | toString | quote }}
{{- end }}
{{- if include "krc.isSet" .Values.muteSeconds }}
- name: MUTE_SECONDS
  value: {{ include "krc.integer" (list "muteSeconds" .Values.muteSeconds) | quote }}
{{- end }}
{{- if include "krc.isSet" .Values.ignoreRestartCount }}
- name: IGNORE_RESTART_COUNT
  value: {{ include "krc.integer" (list "ignoreRestartCount" .Values.ignoreRestartCount) | quote }}
{{- end }}
{{- with include "krc.csv" .Values.ignoredNamespaces }}
- name: IGNORED_NAMESPACES
  value: {{ . | quote }}
{{- end }}
{{- with include "krc.csv" .Values.ignoredPodNamePrefixes }}
- name: IGNORED_POD_NAME_PREFIXES
  value: {{ . | quote }}
{{- end }}
{{- with include "krc.csv" .Values.watchedNamespaces }}
- name: WATCHED_NAMESPACES
  value: {{ . | quote }}
{{- end }}
{{- with include "krc.csv" .Values.watchedPodNamePrefixes }}
- name: WATCHED_POD_NAME_PREFIXES
  value: {{ . | quote }}
{{- end }}
{{- if include "krc.isSet" .Values.ignoreRestartsWithExitCodeZero }}
- name: IGNORE_RESTARTS_WITH_EXIT_CODE_ZERO
  value: {{ .Values.ignoreRestartsWithExitCodeZero | toString | quote }}
{{- end }}
{{- with .Values.extraEnv }}
{{- toYaml . | nindent 0 }}
{{- end }}
{{- end -}}

{{/* The change-tracking rules of the ClusterRole or of a namespace's Role (indented as rules):
list/watch of the workload controllers with trackChanges, get on configmaps and secrets with
trackConfigChanges. */}}
{{- define "krc.trackRules" -}}
{{- if .track }}
  # change tracking (trackChanges): the pod templates of every revision and who changed them
  - apiGroups: ["apps"]
    resources: ["deployments", "replicasets", "statefulsets", "daemonsets", "controllerrevisions"]
    verbs: ["list", "watch"]
  - apiGroups: ["batch"]
    resources: ["jobs", "cronjobs"]
    verbs: ["list", "watch"]
{{- end }}
{{- if .trackcfg }}
  # trackConfigChanges: a crashing pod's ConfigMaps and Secrets, metadata only (RBAC cannot
  # say so: get also allows reading their data)
  - apiGroups: [""]
    resources: ["configmaps", "secrets"]
    verbs: ["get"]
{{- end }}
{{- end -}}
