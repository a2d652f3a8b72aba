import { describe, expect, it } from 'vitest'
import { kafkaServerProperties, newKafkaClusterId } from '../src/native/kafka.ts'

describe("Kafka's storage formatting", () => {
  it("when cluster ids are made, then each is 22 base64url characters and none starts with '-' (an option to the storage tool)", () => {
    // one random id in 64 began with '-': among 2000, the chance that none would is about e^-31
    const ids = Array.from({ length: 2000 }, () => newKafkaClusterId())
    expect(ids.filter((id) => !/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/.test(id))).toEqual([])
  })
})

describe("a node's listeners", () => {
  it('when none are given, then the node listens in plaintext on 9092 for clients and on 9093 for its controller', () => {
    const properties = kafkaServerProperties({
      nodeId: 1,
      address: '127.0.0.1',
      voters: '1@127.0.0.1:9093',
      dataDir: '/data',
      replicationFactor: 1,
      minInsyncReplicas: 1,
    })
    expect(properties.split('\n').filter((line) => /listener/.test(line))).toEqual([
      'listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093',
      'advertised.listeners=PLAINTEXT://127.0.0.1:9092',
      'controller.listener.names=CONTROLLER',
      'inter.broker.listener.name=PLAINTEXT',
      'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    ])
  })
})
