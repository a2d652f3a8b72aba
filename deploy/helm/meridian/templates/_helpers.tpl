{{/* Shared helpers: every per-service object is rendered from these, over the services of meridian.catalogue. */}}

{{/*
The services: the port each listens on (PORT) and its own database (empty: none). Declared by each service itself
(its package.json's "meridian" field), so not a value: ./scripts/manifest writes this list from them.
*/}}
{{- /* manifest:begin: written by ./scripts/manifest (docs/how-to/development.md, "Adding a service") */}}
{{- define "meridian.catalogue" -}}
gateway: { port: 8080, database: "" }
auth: { port: 3001, database: auth }
order: { port: 3002, database: orders }
payment: { port: 3003, database: payments }
inventory: { port: 3004, database: inventory }
shipping: { port: 3005, database: shipping }
notification: { port: 3006, database: notifications }
realtime-gateway: { port: 3007, database: realtime }
content: { port: 3008, database: content }
{{- end }}
{{- /* manifest:end */}}

{{- define "meridian.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's prefix of every object's name. */}}
{{- define "meridian.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "meridian.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "meridian.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* The objects of one service: <fullname>-<service>. Arguments: root, name. */}}
{{- define "meridian.serviceFullname" -}}
{{- printf "%s-%s" (include "meridian.fullname" .root) .name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "meridian.commonLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/part-of: meridian
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ include "meridian.tag" . | quote }}
{{- end }}

{{/* What selects one service's pods. Arguments: root, name. */}}
{{- define "meridian.selectorLabels" -}}
app.kubernetes.io/name: {{ include "meridian.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end }}

{{/* Arguments: root, name. */}}
{{- define "meridian.labels" -}}
{{ include "meridian.commonLabels" .root }}
{{ include "meridian.selectorLabels" . }}
{{- end }}

{{- define "meridian.tag" -}}
{{- default .Chart.AppVersion .Values.image.tag }}
{{- end }}

{{/* One service's tag: its own imageTag, else the release's. Arguments: root, settings. */}}
{{- define "meridian.serviceTag" -}}
{{- .settings.imageTag | default (include "meridian.tag" .root) }}
{{- end }}

{{/*
<registry>/meridian/<service>:<tag>, or meridian/<service>:<tag> without a registry. The tag is the service's own
imageTag when set (an upgrade one service at a time: docs/how-to/upgrading.md), else image.tag, else appVersion.
Arguments: root, name, settings.
*/}}
{{- define "meridian.image" -}}
{{- $registry := .root.Values.image.registry | trimSuffix "/" }}
{{- $tag := include "meridian.serviceTag" . }}
{{- if $registry }}{{ printf "%s/meridian/%s:%s" $registry .name $tag }}
{{- else }}{{ printf "meridian/%s:%s" .name $tag }}
{{- end }}
{{- end }}

{{/*
One service's settings: .Values.defaults overlaid with .Values.services.<name>, plus the catalogue's port and
database. Arguments: root, name. Returns YAML (fromYaml it).
*/}}
{{- define "meridian.settings" -}}
{{- $catalogue := include "meridian.catalogue" .root | fromYaml }}
{{- $own := index .root.Values.services .name | default dict }}
{{- $settings := mergeOverwrite (deepCopy .root.Values.defaults) (deepCopy $own) }}
{{- $_ := set $settings "port" (index $catalogue .name).port }}
{{- $_ := set $settings "database" (index $catalogue .name).database }}
{{- toYaml $settings }}
{{- end }}

{{/* The Secret that holds every secret value the services read (secrets.existingSecret, or the chart's own). */}}
{{- define "meridian.secretName" -}}
{{- if .Values.secrets.create }}{{ include "meridian.fullname" . }}-secrets
{{- else }}{{ required "secrets.existingSecret: name the Secret holding the services' secrets (see the chart's README)" .Values.secrets.existingSecret }}
{{- end }}
{{- end }}

{{- define "meridian.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}{{ default (include "meridian.fullname" .) .Values.serviceAccount.name }}
{{- else }}{{ default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Where Kafka's brokers are: the Strimzi cluster's bootstrap service when it is enabled, else engines.kafka.brokers. */}}
{{- define "meridian.kafkaBrokers" -}}
{{- if and .Values.strimzi.enabled (not .Values.engines.kafka.brokers) }}
{{- printf "%s-kafka-bootstrap:9092" .Values.strimzi.clusterName }}
{{- else }}{{ required "engines.kafka.brokers: the brokers' host:port list" .Values.engines.kafka.brokers }}
{{- end }}
{{- end }}

{{/*
SMTP_URL of the services that send mail (auth, notification): smtp.url, else built from smtp.scheme, host and port;
empty when neither is set.
*/}}
{{- define "meridian.smtpUrl" -}}
{{- $smtp := .Values.smtp }}
{{- if $smtp.url }}{{ $smtp.url }}
{{- else if $smtp.host }}{{ printf "%s://%s:%v" $smtp.scheme $smtp.host $smtp.port }}
{{- end }}
{{- end }}

{{/*
The non-secret configuration of one service (docs/reference/configuration.md), as a map of variable to string: the ConfigMap's
data, and the migration Job's environment (a pre-install hook runs before the ConfigMap exists). Arguments: root,
name, settings. Returns YAML.
*/}}
{{- define "meridian.config" -}}
{{- $v := .root.Values }}
{{- $origin := $v.publicOrigin | trimSuffix "/" }}
{{- $auth := include "meridian.serviceFullname" (dict "root" .root "name" "auth") }}
{{- $c := dict
  "NODE_ENV" "production"
  "HOST" "0.0.0.0"
  "PORT" (toString .settings.port)
  "LOG_LEVEL" $v.config.logLevel
  "SERVICE_VERSION" (include "meridian.serviceTag" .)
  "CONSUL_REGISTER" "true"
  "KAFKA_BROKERS" (include "meridian.kafkaBrokers" .root)
  "ENGINES_PLAINTEXT_ALLOWED" (ternary "true" "false" (eq (toString $v.engines.plaintextAllowed) "true"))
  "JWT_ISSUER" $origin
  "JWT_AUDIENCE" $v.config.jwtAudience
  "AUTH_JWKS_URL" (printf "http://%s:3001/.well-known/jwks.json" $auth)
}}
{{- if $v.config.serviceRegion }}{{ $_ := set $c "SERVICE_REGION" $v.config.serviceRegion }}{{ end }}
{{- if $v.config.kafkaNamespace }}{{ $_ := set $c "KAFKA_NAMESPACE" $v.config.kafkaNamespace }}{{ end }}
{{- if not $v.engines.consul.hostAgent }}{{ $_ := set $c "CONSUL_HTTP_ADDR" $v.engines.consul.address }}{{ end }}
{{- if not $v.engines.redis.urlSecretKey }}{{ $_ := set $c "REDIS_URL" $v.engines.redis.url }}{{ end }}
{{- if .settings.database }}{{ $_ := set $c "DATABASE_POOL_MAX" (toString $v.engines.postgres.poolMax) }}{{ end }}
{{- if and (ne .name "gateway") $v.config.trustedProxies }}{{ $_ := set $c "TRUSTED_PROXIES" $v.config.trustedProxies }}{{ end }}
{{- if and (eq .name "gateway") $v.ingress.trustedProxies }}{{ $_ := set $c "TRUSTED_PROXIES" $v.ingress.trustedProxies }}{{ end }}
{{- if eq .name "auth" }}
{{- $_ := set $c "OIDC_SPA_REDIRECT_URIS" (printf "%s/console/" $origin) }}
{{- $_ := set $c "OIDC_WEB_REDIRECT_URIS" (printf "%s/callback" $origin) }}
{{- /* mailed links: the console's pages, the token in the fragment (docs/how-to/email.md, "Password reset") */}}
{{- $_ := set $c "PASSWORD_RESET_URL" (printf "%s/console/#/reset-password" $origin) }}
{{- $_ := set $c "EMAIL_VERIFICATION_URL" (printf "%s/console/#/verify-email" $origin) }}
{{- end }}
{{- /* unset, order limits no customer by their address's proof (0 is a limit: no order at all) */}}
{{- if and (eq .name "order") (ne (toString $v.order.unverifiedCustomerOrderLimit) "") }}{{ $_ := set $c "UNVERIFIED_CUSTOMER_ORDER_LIMIT" (include "meridian.envValue" $v.order.unverifiedCustomerOrderLimit) }}{{ end }}
{{- /* unset, payment calls Stripe itself */}}
{{- if and (eq .name "payment") $v.payment.stripeApiBase }}{{ $_ := set $c "STRIPE_API_BASE" $v.payment.stripeApiBase }}{{ end }}
{{- if and (has .name (list "auth" "notification")) (include "meridian.smtpUrl" .root) }}{{ $_ := set $c "SMTP_URL" (include "meridian.smtpUrl" .root) }}{{ end }}
{{- if eq .name "realtime-gateway" }}{{ $_ := set $c "REALTIME_ALLOWED_ORIGINS" $origin }}{{ end }}
{{- if and (has .name (list "auth" "notification")) $v.mail.from }}{{ $_ := set $c "MAIL_FROM" $v.mail.from }}{{ end }}
{{- if eq .name "notification" }}
{{- $_ := set $c "UNSUBSCRIBE_URL" (printf "%s/api/v1/notifications/unsubscribe" $origin) }}
{{- if $v.mail.unsubscribeMailto }}{{ $_ := set $c "UNSUBSCRIBE_MAILTO" $v.mail.unsubscribeMailto }}{{ end }}
{{- end }}
{{- if eq .name "content" }}{{ $_ := set $c "GRAPHQL_ALLOWED_ORIGINS" $origin }}{{ end }}
{{- range $key, $value := $v.config.env }}{{ $_ := set $c $key (include "meridian.envValue" $value) }}{{ end }}
{{- range $key, $value := .settings.env }}{{ $_ := set $c $key (include "meridian.envValue" $value) }}{{ end }}
{{- range $key, $value := $c }}
{{ $key }}: {{ $value | toString | quote }}
{{- end }}
{{- end }}

{{/*
A value of values.yaml as a variable's text. YAML numbers reach templates as floats, which print 1209600 as
1.2096e+06: a whole number prints as its digits.
*/}}
{{- define "meridian.envValue" -}}
{{- if and (kindIs "float64" .) (eq . (float64 (int64 .))) }}{{ int64 . }}
{{- else }}{{ toString . }}
{{- end }}
{{- end }}

{{/* One variable from a key of the services' Secret. Arguments: root, variable, key, optional. */}}
{{- define "meridian.secretVariable" -}}
- name: {{ .variable }}
  valueFrom:
    secretKeyRef:
      name: {{ include "meridian.secretName" .root }}
      key: {{ .key }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end }}

{{/*
The variables of one service that come from Secrets, or from the pod itself (SERVICE_HOST, the node's Consul agent),
never from the chart's values. Arguments: root, name, settings.
*/}}
{{- define "meridian.secretEnv" -}}
{{- $v := .root.Values }}
- name: POD_IP
  valueFrom:
    fieldRef:
      fieldPath: status.podIP
- name: SERVICE_HOST
  value: $(POD_IP)
{{- if $v.engines.consul.hostAgent }}
- name: HOST_IP
  valueFrom:
    fieldRef:
      fieldPath: status.hostIP
- name: CONSUL_HTTP_ADDR
  value: {{ printf "http://$(HOST_IP):%v" $v.engines.consul.hostAgentPort | quote }}
{{- end }}
{{- if $v.engines.consul.tokenSecretKey }}
{{ include "meridian.secretVariable" (dict "root" .root "variable" "CONSUL_HTTP_TOKEN" "key" $v.engines.consul.tokenSecretKey) }}
{{- end }}
{{- if $v.engines.redis.urlSecretKey }}
{{ include "meridian.secretVariable" (dict "root" .root "variable" "REDIS_URL" "key" $v.engines.redis.urlSecretKey) }}
{{- end }}
{{- /* the gateway calls no /internal/ route, but production refuses its start while the variable is unset */}}
{{ include "meridian.secretVariable" (dict "root" .root "variable" "SERVICE_CREDENTIAL" "key" "service-credential") }}
{{- if .settings.database }}
{{- $pg := $v.engines.postgres }}
{{- if eq $pg.mode "credentials" }}
{{- $secret := printf "%s%s" $pg.credentialsSecretPrefix .name }}
- name: DATABASE_USER
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: username
- name: DATABASE_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: password
- name: DATABASE_URL
  value: {{ printf "postgres://$(DATABASE_USER):$(DATABASE_PASSWORD)@%s:%v/%s%s" (required "engines.postgres.host: the PostgreSQL server (mode credentials)" $pg.host) $pg.port .settings.database (ternary (printf "?%s" $pg.query) "" (ne $pg.query "")) | quote }}
{{- else }}
{{ include "meridian.secretVariable" (dict "root" .root "variable" "DATABASE_URL" "key" (printf "%s-database-url" .name)) }}
{{- end }}
{{- end }}
{{- if eq .name "auth" }}
{{- range $variable := list "SIGNING_KEY_ENCRYPTION_SECRET" "OIDC_COOKIE_KEYS" "OIDC_WEB_CLIENT_SECRET" "OIDC_MACHINE_CLIENT_SECRET" }}
{{ include "meridian.secretVariable" (dict "root" $.root "variable" $variable "key" ($variable | lower | replace "_" "-")) }}
{{- end }}
{{- end }}
{{- if eq .name "payment" }}
{{ include "meridian.secretVariable" (dict "root" .root "variable" "STRIPE_SECRET_KEY" "key" "stripe-secret-key") }}
{{ include "meridian.secretVariable" (dict "root" .root "variable" "STRIPE_WEBHOOK_SECRET" "key" "stripe-webhook-secret") }}
{{- end }}
{{- if has .name (list "order" "payment") }}
{{ include "meridian.secretVariable" (dict "root" .root "variable" "IDEMPOTENCY_SECRET" "key" "idempotency-secret") }}
{{- end }}
{{- /* the SMTP credentials, from a Secret of their own (smtp.credentialsSecret) */}}
{{- if and (has .name (list "auth" "notification")) $v.smtp.credentialsSecret }}
- name: SMTP_USERNAME
  valueFrom:
    secretKeyRef:
      name: {{ $v.smtp.credentialsSecret }}
      key: {{ $v.smtp.usernameKey }}
- name: SMTP_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $v.smtp.credentialsSecret }}
      key: {{ $v.smtp.passwordKey }}
{{- end }}
{{- if eq .name "notification" }}
{{ include "meridian.secretVariable" (dict "root" .root "variable" "UNSUBSCRIBE_SECRET" "key" "unsubscribe-secret") }}
{{- end }}
{{- if eq .name "shipping" }}
{{ include "meridian.secretVariable" (dict "root" .root "variable" "SHIPPING_CARRIER_KEYS" "key" "shipping-carrier-keys" "optional" true) }}
{{- end }}
{{- if eq .name "order" }}
{{ include "meridian.secretVariable" (dict "root" .root "variable" "RETURNS_CARRIER_KEYS" "key" "returns-carrier-keys" "optional" true) }}
{{- end }}
{{- with .settings.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "meridian.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "meridian.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* The root filesystem is read-only: /tmp is the only place a service may write. */}}
{{- define "meridian.tmpVolume" -}}
- name: tmp
  emptyDir:
    medium: Memory
    sizeLimit: 64Mi
{{- end }}

{{- define "meridian.tmpMount" -}}
- name: tmp
  mountPath: /tmp
{{- end }}
