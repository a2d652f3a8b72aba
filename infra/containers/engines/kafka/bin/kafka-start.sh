#!/bin/bash
# Starts one KRaft node as the apache/kafka image does: server.properties from defaults (a single broker and controller
# on localhost) overridden by every KAFKA_* variable (KAFKA_FOO_BAR → foo.bar, __ → _, ___ → -), storage formatted
# on the first start with CLUSTER_ID (or a fixed one), the broker in the foreground.
set -euo pipefail
config=/opt/kafka/config/server.properties
declare -A settings=(
  [process.roles]=broker,controller [node.id]=1 [controller.quorum.voters]=1@localhost:9093
  [listeners]=PLAINTEXT://:9092,CONTROLLER://:9093 [advertised.listeners]=PLAINTEXT://localhost:9092
  [controller.listener.names]=CONTROLLER [inter.broker.listener.name]=PLAINTEXT
  [listener.security.protocol.map]=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
  [log.dirs]=/var/lib/kafka/data [num.partitions]=1 [offsets.topic.replication.factor]=1
  [transaction.state.log.replication.factor]=1 [transaction.state.log.min.isr]=1
)
# variables that configure the JVM or this script, not the broker
skip=' KAFKA_HEAP_OPTS KAFKA_JVM_PERFORMANCE_OPTS KAFKA_OPTS KAFKA_VERSION KAFKA_LOG4J_OPTS '
while IFS='=' read -r name value; do
  [[ "$name" == KAFKA_* && "$skip" != *" $name "* ]] || continue
  key="${name#KAFKA_}"
  key="${key,,}"
  key="${key//___/-}"
  key="${key//__/@}"
  key="${key//_/.}"
  settings["${key//@/_}"]="$value"
done < <(env)
: >"$config"
for key in "${!settings[@]}"; do printf '%s=%s\n' "$key" "${settings[$key]}" >>"$config"; done
classpath="/opt/kafka/libs/*"
if [ ! -f "${settings[log.dirs]%%,*}/meta.properties" ]; then
  java -Dlog4j.configuration=file:/opt/kafka/config/log4j.properties -cp "$classpath" kafka.tools.StorageTool \
    format -t "${CLUSTER_ID:-5L6g3nShT-eMCtK--X86sw}" -c "$config" --ignore-formatted >/dev/null
fi
# shellcheck disable=SC2086 # the options are word lists
exec java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx768m} ${KAFKA_JVM_PERFORMANCE_OPTS:--XX:+UseG1GC} -Djava.awt.headless=true \
  -Dlog4j.configuration=file:/opt/kafka/config/log4j.properties ${KAFKA_OPTS:-} \
  -cp "$classpath" kafka.Kafka "$config"
