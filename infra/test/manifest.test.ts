// The services' manifest (infra/src/manifest): the files derived from it are current, and a change to a declaration
// (in a copy of the repository's declarations, never the real files) makes ./scripts/manifest --check fail naming
// each file it makes stale, until ./scripts/manifest writes them again. No engine: files and one process.
import { execFile } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { redisServices } from '@meridian/contracts'
import { afterAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { infraDir, repoRoot } from '../src/layout.ts'
import { derivedFiles, staleFiles } from '../src/manifest/derived.ts'
import { ManifestError, readManifest, servicesOf } from '../src/manifest/manifest.ts'

const tsx = join(infraDir, 'node_modules', '.bin', 'tsx')
const main = join(infraDir, 'src', 'manifest', 'main.ts')
const copies: string[] = []

afterAll(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true })
})

/** What the manifest reads and writes, copied: each service's package.json, src/main.ts and migrations/ folder. */
function copyOfRepository(): string {
  const dir = mkdtempSync(join(tmpdir(), 'meridian-manifest-'))
  copies.push(dir)
  const copy = (file: string) => {
    mkdirSync(dirname(join(dir, file)), { recursive: true })
    cpSync(join(repoRoot, file), join(dir, file))
  }
  for (const file of [
    'package.json',
    'infra/package.json',
    ...derivedFiles(repoRoot, readManifest(repoRoot)).map((derived) => derived.file),
  ])
    copy(file)
  for (const name of readdirSync(join(repoRoot, 'services'))) {
    if (!existsSync(join(repoRoot, 'services', name, 'src', 'main.ts'))) continue
    copy(`services/${name}/package.json`)
    copy(`services/${name}/src/main.ts`)
    if (existsSync(join(repoRoot, 'services', name, 'migrations')))
      mkdirSync(join(dir, 'services', name, 'migrations'), { recursive: true })
  }
  return dir
}

function editJson(file: string, edit: (json: Record<string, unknown>) => void): void {
  const json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
  edit(json)
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`)
}

/** ./scripts/manifest's own entry on `root`: its exit code and what it printed. */
async function manifest(
  root: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(tsx, [main, ...args, '--root', root])
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string }
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' }
  }
}

describe("the services' manifest", () => {
  it('when read, then it lists every service of services/ with its port and database, the gateway first, then the simulator', () => {
    const entries = readManifest(repoRoot)
    expect(entries.map((entry) => entry.name)).toEqual([
      'gateway',
      'auth',
      'order',
      'payment',
      'inventory',
      'shipping',
      'notification',
      'realtime-gateway',
      'content',
      'payment-simulator',
    ])
    expect(entries.find((entry) => entry.name === 'order')).toMatchObject({ port: 3002, database: 'orders' })
    expect(entries.find((entry) => entry.name === 'gateway')?.database).toBeUndefined()
    expect(entries.find((entry) => entry.name === 'payment-simulator')).toMatchObject({
      service: false,
      health: '/health',
    })
  })

  it("when contracts' Redis users are compared with it, then they are its services: a list that must stay typed in a package that reads no file, kept equal here", () => {
    expect([...redisServices].sort()).toEqual(
      servicesOf(readManifest(repoRoot))
        .map((entry) => entry.name)
        .sort(),
    )
  })

  it('when the derived files are compared with what ./scripts/manifest writes, then every one is current', async () => {
    expect(staleFiles(derivedFiles(repoRoot, readManifest(repoRoot))).map((file) => file.file)).toEqual([])
    const check = await manifest(repoRoot, '--check')
    expect(check.stderr).toBe('')
    expect(check.code).toBe(0)
  })

  it("when a copy's service declares another port, then --check fails naming compose's and the chart's files and the command that fixes them; written, they follow", async () => {
    const root = copyOfRepository()
    expect((await manifest(root, '--check')).code).toBe(0)
    editJson(join(root, 'services/content/package.json'), (json) => {
      json.meridian = { port: 3018, database: 'content' }
    })
    const check = await manifest(root, '--check')
    expect(check.code).toBe(1)
    expect(check.stderr.trim().split('\n').sort()).toEqual([
      "deploy/helm/meridian/templates/_helpers.tpl is not current with the services' manifest: run ./scripts/manifest",
      "docker-compose.yml is not current with the services' manifest: run ./scripts/manifest",
    ])
    expect((await manifest(root)).code).toBe(0)
    expect((await manifest(root, '--check')).code).toBe(0)
    const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { environment?: Record<string, string> }>
    }
    expect(compose.services.content?.environment?.PORT).toBe('3018')
    expect(compose.services['content-migrate']?.environment?.PORT).toBe('3018')
    expect(readFileSync(join(root, 'deploy/helm/meridian/templates/_helpers.tpl'), 'utf8')).toContain(
      'content: { port: 3018, database: content }',
    )
  })

  it('when a copy gains a service that declares itself, then every list names it once written: compose, the chart values, schema and catalogue', async () => {
    const root = copyOfRepository()
    mkdirSync(join(root, 'services/search/src'), { recursive: true })
    mkdirSync(join(root, 'services/search/migrations'))
    writeFileSync(join(root, 'services/search/src/main.ts'), '')
    writeFileSync(
      join(root, 'services/search/package.json'),
      JSON.stringify({
        name: '@meridian/search',
        version: '0.1.0',
        meridian: { port: 3009, database: 'search' },
      }),
    )
    const check = await manifest(root, '--check')
    expect(check.code).toBe(1)
    for (const file of [
      'docker-compose.yml',
      'deploy/helm/meridian/templates/_helpers.tpl',
      'deploy/helm/meridian/values.yaml',
      'deploy/helm/meridian/values.schema.json',
    ])
      expect(check.stderr).toContain(`${file} is not current`)
    expect(check.stderr).not.toContain('topics.json')
    expect((await manifest(root)).code).toBe(0)
    const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { image?: string; depends_on?: unknown; environment?: Record<string, string> }>
    }
    expect(compose.services.search?.environment).toMatchObject({
      PORT: '3009',
      DATABASE_URL: `\${SEARCH_DATABASE_URL:-}`,
    })
    expect(compose.services['search-migrate']?.image).toBe(compose.services.search?.image)
    expect(compose.services.gateway?.depends_on).toContain('search')
    const values = parse(readFileSync(join(root, 'deploy/helm/meridian/values.yaml'), 'utf8')) as {
      services: Record<string, unknown>
    }
    expect(values.services.search).toEqual({})
    const schema = JSON.parse(
      readFileSync(join(root, 'deploy/helm/meridian/values.schema.json'), 'utf8'),
    ) as {
      properties: { services: { properties: Record<string, unknown> } }
    }
    expect(schema.properties.services.properties.search).toEqual({ $ref: '#/definitions/service' })
    expect((await manifest(root, '--list')).stdout).toContain('search 3009 /health/ready search\n')
  })

  it("when a copy's topic list misses an event type of the catalogue, then --check names both copies of it", async () => {
    const root = copyOfRepository()
    for (const file of ['infra/topics.json', 'deploy/helm/meridian/files/topics.json'])
      editJson(join(root, file), (json) => {
        json.eventTypes = (json.eventTypes as string[]).filter((type) => type !== 'order.placed')
      })
    const check = await manifest(root, '--check')
    expect(check.code).toBe(1)
    expect(check.stderr).toContain('infra/topics.json is not current')
    expect(check.stderr).toContain('deploy/helm/meridian/files/topics.json is not current')
  })

  it('when a declaration is missing or wrong, then reading the manifest fails naming the file and each problem', async () => {
    const root = copyOfRepository()
    editJson(join(root, 'services/shipping/package.json'), (json) => {
      delete json.meridian
    })
    editJson(join(root, 'services/inventory/package.json'), (json) => {
      json.meridian = { port: 3002 }
    })
    editJson(join(root, 'services/content/package.json'), (json) => {
      json.meridian = { port: 'eighty', database: 'content' }
    })
    expect(() => readManifest(root)).toThrow(ManifestError)
    const check = await manifest(root, '--check')
    expect(check.code).toBe(1)
    expect(check.stderr).toContain('services/shipping/package.json: no "meridian" field')
    expect(check.stderr).toContain(
      'services/inventory/package.json: the service has migrations/ but declares no "database"',
    )
    expect(check.stderr).toContain(
      "services/order/package.json: port 3002 is services/inventory/package.json's too",
    )
    expect(check.stderr).toContain('services/content/package.json: "meridian"/port: must be integer')
  })
})
