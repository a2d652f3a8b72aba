// Kafka behind this package's own small interface, so that services never touch kafkajs and the client can change.
import { type KafkaSasl, type KafkaTls, kafkajsSecurity } from '@meridian/kafka-connection'
import { type IHeaders, Kafka, type KafkaConfig, logLevel, Partitioners, type Producer } from 'kafkajs'

export interface OutgoingMessage {
  topic: string
  key: string
  value: string
  headers: Record<string, string>
}

/** Publishes messages; resolves once every in-sync replica has them. Order is kept per topic and key. */
export interface EventProducer {
  publish(messages: OutgoingMessage[]): Promise<void>
  disconnect(): Promise<void>
}

export interface KafkaOptions {
  brokers: string | string[]
  clientId: string
  /** a kafkajs socket factory: tests use it to cut the network to a real broker */
  socketFactory?: KafkaConfig['socketFactory']
  connectionTimeoutMs?: number
  /**
   * TLS to the brokers: true (the system's CAs) or the PEM texts of the CA to trust and of a client certificate and
   * its key (mutual TLS). kafkaSecurityFromEnv makes it, and `sasl`, from the KAFKA_TLS* and KAFKA_SASL_* variables.
   */
  ssl?: true | KafkaTls
  /** SASL authentication: SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN, with the username and password */
  sasl?: KafkaSasl
}

export function createKafka(options: KafkaOptions): Kafka {
  const brokers = Array.isArray(options.brokers)
    ? options.brokers
    : options.brokers.split(',').map((b) => b.trim())
  return new Kafka({
    clientId: options.clientId,
    brokers,
    logLevel: logLevel.WARN,
    connectionTimeout: options.connectionTimeoutMs ?? 3000,
    retry: { initialRetryTime: 100, retries: 5 },
    ...(options.socketFactory ? { socketFactory: options.socketFactory } : {}),
    ...kafkajsSecurity(options),
  })
}

/** The idempotent producer the spec asks for: acks from all in-sync replicas, at most 5 requests in flight. */
export async function createEventProducer(kafka: Kafka): Promise<EventProducer> {
  const producer: Producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 5,
    allowAutoTopicCreation: false,
    // murmur2 like the Java client: a key lands on the same partition whichever client produced it
    createPartitioner: Partitioners.DefaultPartitioner,
  })
  await producer.connect()
  return {
    async publish(messages) {
      if (messages.length === 0) return
      const byTopic = new Map<string, { key: string; value: string; headers: IHeaders }[]>()
      for (const message of messages) {
        const list = byTopic.get(message.topic) ?? []
        list.push({ key: message.key, value: message.value, headers: message.headers })
        byTopic.set(message.topic, list)
      }
      await producer.sendBatch({
        acks: -1,
        topicMessages: [...byTopic].map(([topic, list]) => ({ topic, messages: list })),
      })
    },
    disconnect: () => producer.disconnect(),
  }
}

/** Header value as text (kafkajs gives Buffers, strings or arrays). */
export function headerText(headers: IHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name]
  const first = Array.isArray(value) ? value[0] : value
  return first === undefined ? undefined : first.toString()
}
