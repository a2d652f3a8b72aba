// scripts/infra: up [--secure] | down | status [--check] | env [--service NAME] | logs <component> [-f] [-n N] | artifacts | redis-acl
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { redisServices } from '@meridian/contracts'
import {
  components,
  type EngineName,
  engineArtifacts,
  ensureInfra,
  ensureSecureInfra,
  infraDown,
  infraEnv,
  infraStatus,
  logFileOf,
  nativeJaegerUiUrl,
  nativeMailpitUrl,
  nativeOtlpEndpoint,
  nativeSmtpUrl,
  type OptionalComponentName,
  optionalComponents,
} from './index.ts'
import { parsePurposes, prepare, purposeSets, pythonToolPath } from './prepare/index.ts'
import { secureEndpoint } from './secure/machine.ts'
import { redisAccessStrings, redisAclTemplate } from './secure/redis-acl.ts'

const engineNames: readonly EngineName[] = [...components, ...optionalComponents]

const usage = `usage: scripts/infra <command>
  prepare [--for P] [--check]  obtain what the purposes P need on this machine (dev, test, or some of engines,
                           trace-store, e2e, containers, engine-images, cluster, deploy, fuzz, payments, mail,
                           comma-separated; default test); --check only finds, and fails naming what is missing
                           (./scripts/prepare runs this)
  where <tool>             the path of a prepared Python tool (schemathesis, podman-compose)
  up [--secure]            start PostgreSQL, Kafka, Consul, Redis, Jaeger and Mailpit (reuses healthy ones; obtains
                           what they need first, as prepare --for dev does), create databases and topics;
                           --secure: the four engines with TLS and a credential per service, on the same ports
                           (CA and secrets in MERIDIAN_SECURE_DIR, default the cache's secure/; Jaeger and Mailpit
                           stay plaintext on loopback); either refuses while the other kind runs
  down                     stop what 'up' or 'up --secure' started
  status [--check]         mode (plaintext or secure), version, endpoint, pid and health of each engine (--check:
                           exit 1 unless all are healthy; Jaeger and Mailpit, being optional, may be stopped)
  env [--service NAME]     export lines for DATABASE_URL, each service's <SERVICE>_DATABASE_URL, KAFKA_BROKERS,
                           CONSUL_HTTP_ADDR, REDIS_URL, OTEL_EXPORTER_OTLP_ENDPOINT while Jaeger runs, and
                           SMTP_URL and MAILPIT_URL while Mailpit runs; on secure engines the administrator's
                           credentials and the TLS variables (KAFKA_TLS*, KAFKA_SASL_*, REDIS_TLS_CA, CONSUL_CACERT,
                           CONSUL_HTTP_TOKEN); --service NAME: only what that service needs, its own credentials
  logs <component> [-f] [-n N]   the log of a native engine (${engineNames.join(', ')})
  artifacts                what the engine images are built from (the native path's binaries and jars), as JSON
  redis-acl [--realtime-prefix P] [--content-prefix P] [--access-strings]
                           the ACL users of a Redis of one's own, one per service from the declared access, passwords
                           as placeholders; --access-strings: each user's rules as a managed offering's access string
                           (docs/how-to/deploying.md)`

/**
 * Inside ./scripts/test, after its preparation (MERIDIAN_PREPARED=1), what runs only finds its prerequisites: nothing
 * a test starts obtains anything, and a missing one fails naming ./scripts/prepare.
 */
const prepared = () => process.env.MERIDIAN_PREPARED === '1'

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  switch (command) {
    case 'prepare': {
      const forIndex = rest.indexOf('--for')
      const chosen = parsePurposes(forIndex >= 0 ? (rest[forIndex + 1] ?? '') : 'test')
      const report = await prepare({ purposes: chosen, check: rest.includes('--check') || prepared() })
      return report.ok ? 0 : 1
    }
    case 'where': {
      const name = rest[0]
      if (name !== 'schemathesis' && name !== 'podman-compose') {
        process.stderr.write('scripts/infra where: name schemathesis or podman-compose\n')
        return 2
      }
      process.stdout.write(`${pythonToolPath(name)}\n`)
      return 0
    }
    case 'up': {
      const started = Date.now()
      const ready = await prepare({ purposes: [...purposeSets.dev], check: prepared() })
      if (!ready.ok) return 1
      if (rest.includes('--secure')) {
        const machine = await ensureSecureInfra({ traceStore: true, mail: true })
        process.stderr.write(
          `[infra] secure engines ready in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
        )
        process.stdout.write(
          [
            `PostgreSQL  ${secureEndpoint(machine, 'postgres')}`,
            `Kafka       ${secureEndpoint(machine, 'kafka')}`,
            `Consul      ${secureEndpoint(machine, 'consul')}`,
            `Redis       ${secureEndpoint(machine, 'redis')}`,
            `CA          ${machine.caFile}`,
            `State       ${machine.dir} (credentials.json of each engine, mode 0600)`,
            `Jaeger      OTLP ${nativeOtlpEndpoint}, UI ${nativeJaegerUiUrl} (plaintext, loopback)`,
            `Mailpit     SMTP ${nativeSmtpUrl}, UI and API ${nativeMailpitUrl} (plaintext, loopback)`,
            `Variables   eval "$(scripts/infra env)" (administrator), scripts/infra env --service <name>`,
            '',
          ].join('\n'),
        )
        return 0
      }
      const endpoints = await ensureInfra({ traceStore: true, mail: true })
      process.stderr.write(`[infra] ready in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
      process.stdout.write(
        [
          `PostgreSQL  ${endpoints.databaseUrl}`,
          `Kafka       ${endpoints.kafkaBrokers}`,
          `Consul      ${endpoints.consulHttpAddr}`,
          `Redis       ${endpoints.redisUrl}`,
          endpoints.otlpEndpoint === nativeOtlpEndpoint
            ? `Jaeger      OTLP ${endpoints.otlpEndpoint}, UI ${nativeJaegerUiUrl}`
            : `OTLP        ${endpoints.otlpEndpoint}`,
          endpoints.mailpitUrl === nativeMailpitUrl
            ? `Mailpit     SMTP ${endpoints.smtpUrl}, UI and API ${nativeMailpitUrl}`
            : `SMTP        ${endpoints.smtpUrl}`,
          '',
        ].join('\n'),
      )
      return 0
    }
    case 'down':
      await infraDown()
      return 0
    case 'status': {
      const statuses = await infraStatus()
      const secure = statuses.some((s) => s.secure)
      process.stdout.write(
        secure
          ? 'engines: secure (TLS, a credential per service: scripts/infra up --secure)\n'
          : 'engines: plaintext (scripts/infra up)\n',
      )
      const rows = [
        ['COMPONENT', 'MODE', 'HEALTH', 'PID', 'VERSION / PROBLEM', 'ENDPOINT'],
        ...statuses.map((s) => [
          s.name,
          s.secure ? `${s.mode}/secure` : s.mode,
          s.healthy ? 'healthy' : s.detail === 'stopped' ? 'stopped' : 'unhealthy',
          s.process ?? '-',
          s.detail,
          s.endpoint,
        ]),
      ]
      const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
      for (const row of rows) {
        process.stdout.write(
          `${row
            .map((cell, column) => cell.padEnd(widths[column]!))
            .join('  ')
            .trimEnd()}\n`,
        )
      }
      const optional = (name: EngineName) => optionalComponents.includes(name as OptionalComponentName)
      const failing = statuses.some((s) => !s.healthy && !(optional(s.name) && s.detail === 'stopped'))
      return rest.includes('--check') && failing ? 1 : 0
    }
    case 'env': {
      const at = rest.indexOf('--service')
      const service = at >= 0 ? rest[at + 1] : undefined
      if (at >= 0 && !service) {
        process.stderr.write('scripts/infra env --service: name a service\n')
        return 2
      }
      process.stdout.write(await infraEnv(process.env, service ? { service } : {}))
      return 0
    }
    case 'artifacts':
      process.stdout.write(`${JSON.stringify(await engineArtifacts(), null, 2)}\n`)
      return 0
    case 'redis-acl': {
      const option = (name: string) => (rest.includes(name) ? rest[rest.indexOf(name) + 1] : undefined)
      const realtime = option('--realtime-prefix')
      const contentPubsub = option('--content-prefix')
      const prefixes = {
        ...(realtime === undefined ? {} : { realtime }),
        ...(contentPubsub === undefined ? {} : { contentPubsub }),
      }
      const lines = rest.includes('--access-strings')
        ? redisAccessStrings(redisServices, prefixes)
        : redisAclTemplate(redisServices, prefixes)
      process.stdout.write(`${lines.join('\n')}\n`)
      return 0
    }
    case 'logs': {
      const name = rest.find((arg) => !arg.startsWith('-') && !/^\d+$/.test(arg)) as EngineName | undefined
      if (!name || !engineNames.includes(name)) {
        process.stderr.write(`scripts/infra logs: name one of ${engineNames.join(', ')}\n`)
        return 2
      }
      const file = logFileOf(name)
      if (!existsSync(file)) {
        process.stderr.write(`${name}: no log at ${file} (never started natively here)\n`)
        return 1
      }
      const lines = rest[rest.indexOf('-n') + 1] ?? '200'
      const follow = rest.includes('-f') || rest.includes('--follow')
      const tail = spawn(
        'tail',
        ['-n', rest.includes('-n') ? lines : '200', ...(follow ? ['-F'] : []), file],
        {
          stdio: 'inherit',
        },
      )
      return new Promise((resolve) => tail.on('close', (code) => resolve(code ?? 0)))
    }
    default:
      process.stderr.write(`${usage}\n`)
      return command === undefined || command === 'help' || command === '--help' ? 0 : 2
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`[infra] ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  },
)
