import { describe, expect, it } from 'vitest'
import { endpointsOf, infraEnv, planInfra } from '../src/index.ts'

const everyEndpoint = {
  DATABASE_URL: 'postgres://u:p@db.internal:5432/postgres',
  KAFKA_BROKERS: 'k1:9092,k2:9092',
  CONSUL_HTTP_ADDR: 'consul.internal:8500',
  REDIS_URL: 'redis://cache.internal:6379',
}

describe('infrastructure plan', () => {
  it('when every endpoint is given in the environment, then each engine is used as it is and nothing is started', async () => {
    const plan = await planInfra({ ...everyEndpoint })
    expect(plan.map((p) => [p.name, p.mode, p.endpoint])).toEqual([
      ['postgres', 'external', everyEndpoint.DATABASE_URL],
      ['kafka', 'external', everyEndpoint.KAFKA_BROKERS],
      ['consul', 'external', everyEndpoint.CONSUL_HTTP_ADDR],
      ['redis', 'external', everyEndpoint.REDIS_URL],
    ])
  })

  it('when only some endpoints are given and native mode is asked for, then the others are native on the fixed ports', async () => {
    const plan = await planInfra({ REDIS_URL: 'redis://elsewhere:6380', MERIDIAN_INFRA: 'native' })
    expect(Object.fromEntries(plan.map((p) => [p.name, `${p.mode} ${p.endpoint}`]))).toEqual({
      postgres: 'native postgres://postgres:postgres@127.0.0.1:5432/postgres',
      kafka: 'native 127.0.0.1:9092',
      consul: 'native http://127.0.0.1:8500',
      redis: 'external redis://elsewhere:6380',
    })
  })

  it('when MERIDIAN_INFRA names no known mode, then planning fails with the accepted values', async () => {
    await expect(planInfra({ MERIDIAN_INFRA: 'kubernetes' })).rejects.toThrow(/auto, docker or native/)
  })

  it('when a Consul token is configured, then env prints it beside the four endpoints', async () => {
    const env = { ...everyEndpoint, CONSUL_HTTP_TOKEN: 'secret-token' }
    expect(endpointsOf(await planInfra(env), env).consulToken).toBe('secret-token')
    expect(await infraEnv(env)).toBe(
      [
        `export DATABASE_URL='${everyEndpoint.DATABASE_URL}'`,
        `export KAFKA_BROKERS='${everyEndpoint.KAFKA_BROKERS}'`,
        `export CONSUL_HTTP_ADDR='${everyEndpoint.CONSUL_HTTP_ADDR}'`,
        `export REDIS_URL='${everyEndpoint.REDIS_URL}'`,
        "export CONSUL_HTTP_TOKEN='secret-token'",
        '',
      ].join('\n'),
    )
  })
})
