#!/bin/bash
# As in Kafka's distribution: the API versions each broker supports (the image's health check asks it).
exec java -Xmx128m -XX:TieredStopAtLevel=1 -Xshare:auto -cp "/opt/kafka/libs/*" kafka.admin.BrokerApiVersionsCommand "$@"
