// @meridian/kafka-connection: a Kafka client's TLS and SASL from the same variables in every service and tool.

export {
  type KafkaSasl,
  type KafkaSaslMechanism,
  type KafkaSecurity,
  KafkaSecurityEnv,
  KafkaSecurityError,
  type KafkaSecurityVariable,
  type KafkaSecurityVariables,
  type KafkaTls,
  kafkajsSecurity,
  kafkaSaslMechanisms,
  kafkaSecurityFromEnv,
  kafkaSecurityVariables,
} from './kafka-security.ts'
