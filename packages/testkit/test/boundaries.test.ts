// The repository's import boundaries (docs/explanation/architecture.md, "What depends on what"): every TypeScript file's imports judged by the rules below.
// The check is first proved on small made-up repositories, so a green run means "nothing crosses", not "nothing read".
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  findCycles,
  findViolations,
  importsOf,
  type Repository,
  type Rule,
  readRepository,
  workspaceAt,
} from './import-boundaries.ts'

/** The folders of a service that the outside world calls into: routes, consumers, channels, GraphQL resolvers. */
const entryPoints = ['src/routes/', 'src/channels/', 'src/events/', 'src/graphql/']

/**
 * What may not be imported. Everything else is allowed, notably: service-kit, db and events import contracts;
 * testkit, bench and infra import packages (bench also services, to measure them); a service's tests import its src.
 * Rules name kinds and folders rather than services, so order, payment and the rest are covered as they arrive.
 */
const rules: Rule[] = [
  { rule: 'packages never import services', from: { kind: 'package' }, to: { kind: 'service' } },
  {
    rule: 'contracts imports nothing of ours',
    from: { workspace: '@meridian/contracts' },
    to: {},
    between: 'other',
    // but its vitest.config.ts takes the tests' timeouts from the one setting every workspace's suite scales by
    except: {
      from: { under: 'vitest.config.ts' },
      to: { workspace: '@meridian/infra', under: 'src/test-time.ts' },
    },
  },
  {
    rule: 'a service never imports another service',
    from: { kind: 'service' },
    to: { kind: 'service' },
    between: 'other',
  },
  {
    rule: 'repositories are SQL only: data/ never imports domain/',
    from: { kind: 'service', under: 'src/data/' },
    to: { under: 'src/domain/' },
    between: 'same',
  },
  {
    rule: 'domain/ never imports routes/',
    from: { kind: 'service', under: 'src/domain/' },
    to: { under: 'src/routes/' },
    between: 'same',
  },
  {
    rule: 'domain/ never imports channels/',
    from: { kind: 'service', under: 'src/domain/' },
    to: { under: 'src/channels/' },
    between: 'same',
  },
  // an entry point (a route, a consumer, a realtime channel, a GraphQL resolver) calls use cases, which own the data
  {
    rule: 'entry points never import data/',
    from: { kind: 'service', under: entryPoints },
    to: { under: 'src/data/' },
    between: 'same',
  },
  // a client of another service is called by domain/; what it needs from a request is passed in
  {
    rule: 'clients/ never imports routes/ or channels/',
    from: { kind: 'service', under: 'src/clients/' },
    to: { under: ['src/routes/', 'src/channels/'] },
    between: 'same',
  },
  // every workspace, not only services: shipped code never depends on its tests
  { rule: 'src/ never imports test/', from: { under: 'src/' }, to: { under: 'test/' }, between: 'same' },
]

/** What a cycle's report says. */
const noCycle = 'no import cycle inside a workspace'

const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url))

/** A repository of a few workspaces with the given files (path -> text). */
function madeUp(files: Record<string, string>): Repository {
  return {
    root: '/repo',
    workspaces: [
      workspaceAt('packages/contracts', '@meridian/contracts'),
      workspaceAt('packages/db', '@meridian/db'),
      workspaceAt('packages/testkit', '@meridian/testkit'),
      workspaceAt('services/auth', '@meridian/auth'),
      workspaceAt('services/order', '@meridian/order'),
      workspaceAt('bench', '@meridian/bench'),
      workspaceAt('infra', '@meridian/infra'),
    ],
    files: Object.entries(files).map(([path, text]) => ({ path, text })),
  }
}

describe('import boundaries', () => {
  it('when a file imports in every form, then each specifier is read with its line and look-alike text is not', () => {
    const text = [
      "// import { fake } from './comment.ts'",
      "import type { A } from './a.ts'",
      'import { type B, c } from "./b.ts"',
      "export * from './c.ts'",
      "export type { D } from './d.ts'",
      "import './side-effect.ts'",
      'const quoted = "import x from \'./string.ts\'"',
      "const templated = `import y from './template.ts'`",
      "const loaded = await import('./dynamic.ts')",
      "type T = import('./type-query.ts').T",
      "const required = require('./required.cjs')",
      // only a whole string literal names a module; a computed name cannot be judged
      "const concatenated = await import('./computed-' + quoted)",
      `const templated = await import(\`./computed-\${quoted}.ts\`)`,
    ].join('\n')
    expect(importsOf(text)).toEqual([
      { specifier: './a.ts', line: 2 },
      { specifier: './b.ts', line: 3 },
      { specifier: './c.ts', line: 4 },
      { specifier: './d.ts', line: 5 },
      { specifier: './side-effect.ts', line: 6 },
      { specifier: './dynamic.ts', line: 9 },
      { specifier: './type-query.ts', line: 10 },
      { specifier: './required.cjs', line: 11 },
    ])
  })

  it('when imports cross each boundary, then each is reported as file:line imports X (rule)', () => {
    const repository = madeUp({
      'packages/db/src/index.ts': "import { buildApp } from '@meridian/auth'\n",
      'packages/testkit/src/index.ts': "\nexport { x } from '../../../services/order/src/app.ts'\n",
      'packages/contracts/src/index.ts': [
        "import type { Queryable } from '@meridian/db'",
        "import { ports } from '../../../infra/src/ports.ts'",
        "import { later } from '@meridian/not-yet-a-workspace'",
        "import { scaledMs } from '../../../infra/src/test-time.ts'",
      ].join('\n'),
      'packages/contracts/vitest.config.ts': "import { freePort } from '../../infra/src/index.ts'\n",
      'services/auth/src/app.ts': "import type { Order } from '@meridian/order'\n",
      'services/order/test/order.test.ts': "import { x } from '../../auth/src/domain/users.ts'\n",
      'services/auth/src/data/users-repository.ts': "import { userColumns } from '../domain/user-query.ts'\n",
      'services/auth/src/domain/users.ts': "const access = await import('../routes/users/access.ts')\n",
      'services/auth/src/app.test-seam.ts': "import { identities } from '../test/identities.ts'\n",
      'packages/db/src/client.ts': "import type { Fixture } from '../test/support/fixture.ts'\n",
      'services/order/src/domain/orders.ts': "import { channel } from '../channels/orders.ts'\n",
      'services/order/src/routes/orders/index.ts':
        "import type { OrderRecord } from '../../data/orders.ts'\n",
      'services/order/src/events/consumers.ts': "import { createOrders } from '../data/orders.ts'\n",
      'services/order/src/channels/orders.ts': "export { x } from '../data/orders.ts'\n",
      'services/order/src/graphql/resolvers.ts': "import type { OrderRecord } from '../data/orders.ts'\n",
      'services/order/src/clients/inventory.ts':
        "import { guards } from '../routes/orders/access.ts'\nimport { headers } from '../channels/channel.ts'\n",
    })
    expect(findViolations(repository, rules)).toEqual([
      'packages/db/src/index.ts:1 imports @meridian/auth (packages never import services)',
      'packages/testkit/src/index.ts:2 imports ../../../services/order/src/app.ts (packages never import services)',
      'packages/contracts/src/index.ts:1 imports @meridian/db (contracts imports nothing of ours)',
      'packages/contracts/src/index.ts:2 imports ../../../infra/src/ports.ts (contracts imports nothing of ours)',
      'packages/contracts/src/index.ts:3 imports @meridian/not-yet-a-workspace (contracts imports nothing of ours)',
      'packages/contracts/src/index.ts:4 imports ../../../infra/src/test-time.ts (contracts imports nothing of ours)',
      'packages/contracts/vitest.config.ts:1 imports ../../infra/src/index.ts (contracts imports nothing of ours)',
      'services/auth/src/app.ts:1 imports @meridian/order (a service never imports another service)',
      'services/order/test/order.test.ts:1 imports ../../auth/src/domain/users.ts (a service never imports another service)',
      'services/auth/src/data/users-repository.ts:1 imports ../domain/user-query.ts (repositories are SQL only: data/ never imports domain/)',
      'services/auth/src/domain/users.ts:1 imports ../routes/users/access.ts (domain/ never imports routes/)',
      'services/auth/src/app.test-seam.ts:1 imports ../test/identities.ts (src/ never imports test/)',
      'packages/db/src/client.ts:1 imports ../test/support/fixture.ts (src/ never imports test/)',
      'services/order/src/domain/orders.ts:1 imports ../channels/orders.ts (domain/ never imports channels/)',
      'services/order/src/routes/orders/index.ts:1 imports ../../data/orders.ts (entry points never import data/)',
      'services/order/src/events/consumers.ts:1 imports ../data/orders.ts (entry points never import data/)',
      'services/order/src/channels/orders.ts:1 imports ../data/orders.ts (entry points never import data/)',
      'services/order/src/graphql/resolvers.ts:1 imports ../data/orders.ts (entry points never import data/)',
      'services/order/src/clients/inventory.ts:1 imports ../routes/orders/access.ts (clients/ never imports routes/ or channels/)',
      'services/order/src/clients/inventory.ts:2 imports ../channels/channel.ts (clients/ never imports routes/ or channels/)',
    ])
  })

  it('when imports go the allowed way, then nothing is reported', () => {
    const repository = madeUp({
      'packages/contracts/src/index.ts': "export * from './errors.ts'\nimport { Type } from 'typebox'\n",
      'packages/db/src/index.ts': "import { AppError } from '@meridian/contracts'\nimport 'node:fs'\n",
      'packages/contracts/vitest.config.ts': "import { testTimeouts } from '../../infra/src/test-time.ts'\n",
      'packages/testkit/src/index.ts': "import { createPool } from '@meridian/db'\n",
      'bench/src/servers.ts': "import { buildApp } from '@meridian/auth'\n",
      'services/auth/src/domain/users.ts':
        "import type { UsersRepository } from '../data/users-repository.ts'\n",
      'services/auth/src/data/users-repository.ts': "import { userColumns } from './user-columns.ts'\n",
      'services/auth/src/routes/users/index.ts': "import { listUsers } from '../../domain/users.ts'\n",
      'services/auth/src/events/consumers.ts': "import { recordUser } from '../domain/users.ts'\n",
      'services/auth/src/domain/sign-in.ts': "import { createUpstream } from '../clients/directory.ts'\n",
      'services/auth/src/clients/directory.ts': "import type { UserRecord } from '../domain/users.ts'\n",
      'services/auth/src/app.ts': [
        "import { createUsersRepository } from './data/users-repository.ts'",
        "import { usersRoutes } from './routes/users/index.ts'",
      ].join('\n'),
      'services/auth/test/users.test.ts': [
        "import { createUsersRepository } from '../src/data/users-repository.ts'",
        "import { identities } from './identities.ts'",
        "import { freshDatabase } from '@meridian/testkit'",
      ].join('\n'),
    })
    expect(findViolations(repository, rules)).toEqual([])
  })

  it('when files of a workspace import each other in a ring, then the ring is reported in order with each line', () => {
    const repository = madeUp({
      'services/order/src/domain/orders.ts':
        "import { x } from './access.ts'\nimport { y } from './saga.ts'\n",
      'services/order/src/domain/saga.ts': "import type { Step } from './steps/index.ts'\n",
      'services/order/src/domain/steps/index.ts': "export { reserve } from '../orders.ts'\n",
      'services/order/src/domain/access.ts': "import { z } from 'node:fs'\n",
      'packages/db/src/client.ts': "import { pool } from './pool.js'\n",
      'packages/db/src/pool.ts': "\n\nimport type { Client } from './client.ts'\n",
      'packages/db/src/self.ts': "export * from './self.ts'\n",
      'packages/db/src/lists.ts': "import { x } from './queries'\n",
      'packages/db/src/queries/index.ts': "import { y } from '../lists.ts'\n",
    })
    expect(findCycles(repository, noCycle)).toEqual([
      `packages/db/src/client.ts:1 -> packages/db/src/pool.ts:3 -> packages/db/src/client.ts (${noCycle})`,
      `packages/db/src/lists.ts:1 -> packages/db/src/queries/index.ts:1 -> packages/db/src/lists.ts (${noCycle})`,
      `packages/db/src/self.ts:1 -> packages/db/src/self.ts (${noCycle})`,
      `services/order/src/domain/orders.ts:2 -> services/order/src/domain/saga.ts:1 -> services/order/src/domain/steps/index.ts:1 -> services/order/src/domain/orders.ts (${noCycle})`,
    ])
  })

  it('when imports only go one way, or a ring passes through another workspace, then no cycle is reported', () => {
    const repository = madeUp({
      'services/order/src/app.ts':
        "import { a } from './domain/orders.ts'\nimport { b } from './data/orders.ts'\n",
      'services/order/src/domain/orders.ts': "import type { Row } from '../data/orders.ts'\n",
      'services/order/src/data/orders.ts': "import { sql } from '@meridian/db'\n",
      // a ring across workspaces is a cycle of package dependencies, which turbo refuses; this check is about files
      'packages/db/src/index.ts': "import { x } from '../../testkit/src/index.ts'\n",
      'packages/testkit/src/index.ts': "import { y } from '../../db/src/index.ts'\n",
    })
    expect(findCycles(repository, noCycle)).toEqual([])
  })

  it('when the repository is read, then every workspace and kind a rule names is there, so no rule is dead', () => {
    const { workspaces, files } = readRepository(repositoryRoot)
    const named = rules.flatMap(({ from, to }) => [from.workspace, to.workspace]).filter((name) => name)
    const kinds = rules.flatMap(({ from, to }) => [from.kind, to.kind]).filter((kind) => kind)
    expect(workspaces.map(({ name }) => name)).toEqual(expect.arrayContaining(named))
    expect(workspaces.map(({ kind }) => kind)).toEqual(expect.arrayContaining(kinds))
    for (const { dir } of workspaces) {
      expect(
        files.some(({ path }) => path.startsWith(`${dir}/`)),
        `${dir} has TypeScript files`,
      ).toBe(true)
    }
    // a folder a rule names (src/channels/, src/graphql/) exists in some service, so a renamed folder is noticed
    const folders = rules.flatMap(({ from, to }) => [from.under, to.under].flat()).filter((under) => under)
    for (const folder of new Set(folders)) {
      expect(
        files.some(({ path }) => path.includes(`/${folder}`)),
        `some workspace has ${folder}`,
      ).toBe(true)
    }
  })

  it('when every TypeScript file of the repository is read, then no import crosses a boundary', () => {
    const violations = findViolations(readRepository(repositoryRoot), rules)
    expect(
      violations,
      `${violations.length} import(s) cross a boundary (docs/explanation/architecture.md)`,
    ).toEqual([])
  })

  it('when every TypeScript file of the repository is read, then no workspace has an import cycle', () => {
    const cycles = findCycles(readRepository(repositoryRoot), noCycle)
    expect(cycles, `${cycles.length} import cycle(s) (docs/explanation/architecture.md)`).toEqual([])
  })
})
