// ./scripts/test's typecheck: the programs of typecheck-programs.ts, two at a time (tsc is one thread), each
// incremental with its state kept in the cache folder between runs. A state holds paths relative to its own file,
// so it is put back beside the program before the run and kept from there after it: a state from another clone or
// commit is as good as this one's own (tsc compares the files' contents, not their times).
// Writes each program's time to .turbo/typecheck/times.json for the closing table; exits 1 when one fails.
//   tsx infra/src/test-run/typecheck.ts
import { spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { layoutFromEnv, repoRoot } from '../layout.ts'
import type { TaskTime } from './report.ts'
import { partitionPrograms, readWorkspaces, togetherConfig } from './typecheck-programs.ts'

interface Program {
  title: string
  /** the folder tsc runs in and the project it reads */
  cwd: string
  project: string
  /** the state's file beside the program, and where it is kept between runs */
  state: string
  kept: string
}

const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc')

function check(program: Program): Promise<TaskTime> {
  const started = performance.now()
  if (existsSync(program.kept)) copyFileSync(program.kept, program.state)
  const args = [tsc, '-p', program.project, '--noEmit', '--incremental', '--tsBuildInfoFile', program.state]
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: program.cwd, stdio: 'inherit' })
    child.on('close', (code) => {
      if (existsSync(program.state)) copyFileSync(program.state, program.kept)
      const seconds = (performance.now() - started) / 1000
      resolve({ workspace: program.title, seconds, cached: false, exitCode: code ?? 1 })
    })
  })
}

async function main(): Promise<void> {
  const { together, alone } = partitionPrograms(await readWorkspaces(repoRoot))
  const out = join(repoRoot, '.turbo', 'typecheck')
  const keptDir = join(layoutFromEnv().cacheDir, 'tsbuildinfo')
  mkdirSync(out, { recursive: true })
  mkdirSync(keptDir, { recursive: true })
  writeFileSync(join(out, 'tsconfig.json'), `${JSON.stringify(togetherConfig(together, 2), null, 2)}\n`)
  const programs: Program[] = [
    {
      title: `one program: ${together.length} workspaces`,
      cwd: repoRoot,
      project: join(out, 'tsconfig.json'),
      state: join(out, 'together.tsbuildinfo'),
      kept: join(keptDir, 'together.tsbuildinfo'),
    },
    ...alone.map((workspace) => ({
      title: workspace.name,
      cwd: join(repoRoot, workspace.dir),
      project: 'tsconfig.json',
      state: join(repoRoot, workspace.dir, '.turbo', 'typecheck.tsbuildinfo'),
      kept: join(keptDir, `${workspace.dir.replaceAll('/', '-')}.tsbuildinfo`),
    })),
  ]
  for (const program of programs) mkdirSync(join(program.state, '..'), { recursive: true })
  const queue = [...programs]
  const times: TaskTime[] = []
  const lane = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) times.push(await check(next))
  }
  await Promise.all(Array.from({ length: Math.min(2, availableParallelism()) }, lane))
  writeFileSync(join(out, 'times.json'), `${JSON.stringify(times, null, 2)}\n`)
  const failed = times.filter((time) => time.exitCode !== 0)
  for (const time of failed) process.stderr.write(`typecheck failed: ${time.workspace}\n`)
  if (failed.length > 0) process.exitCode = 1
}

await main()
