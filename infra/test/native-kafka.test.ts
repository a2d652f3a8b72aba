import { describe, expect, it } from 'vitest'
import { newKafkaClusterId } from '../src/native/kafka.ts'

describe("Kafka's storage formatting", () => {
  it("when cluster ids are made, then each is 22 base64url characters and none starts with '-' (an option to the storage tool)", () => {
    // one random id in 64 began with '-': among 2000, the chance that none would is about e^-31
    const ids = Array.from({ length: 2000 }, () => newKafkaClusterId())
    expect(ids.filter((id) => !/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/.test(id))).toEqual([])
  })
})
