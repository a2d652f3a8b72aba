// ./scripts/build [--force] [name...]: the production form of the named services (all nine and the payment
// simulator when none is named) into build/<name>/; one already built from the same inputs is kept.
// ./scripts/build --inputs [name...]: prints `<name> <digest of its inputs>` for each, building nothing (scripts/images
// names an image by it).
import { buildTarget } from './build.ts'
import { inputsDigest } from './inputs.ts'
import { buildTargets } from './targets.ts'

const say = (line: string) => process.stderr.write(`[build] ${line}\n`)

async function main(argv: string[]): Promise<void> {
  const targets = buildTargets()
  if (argv.includes('-h') || argv.includes('--help')) {
    say(
      `usage: ./scripts/build [--force | --inputs] [name...]   names: ${targets.map((target) => target.name).join(', ')}`,
    )
    return
  }
  const force = argv.includes('--force')
  const names = argv.filter((argument) => argument !== '--force' && argument !== '--inputs')
  const unknown = names.filter((name) => !targets.some((target) => target.name === name))
  if (unknown.length > 0) {
    throw new Error(
      `unknown: ${unknown.join(', ')} (names: ${targets.map((target) => target.name).join(', ')})`,
    )
  }
  const chosen = names.length === 0 ? targets : targets.filter((target) => names.includes(target.name))
  if (argv.includes('--inputs')) {
    for (const target of chosen) process.stdout.write(`${target.name} ${inputsDigest(target)}\n`)
    return
  }
  // two at a time: each is mostly one process at a time (pnpm deploy, then esbuild), waiting on the disk between,
  // so one after another left a core idle (ten services: 52 s one by one in an image build on 2 cores)
  const queue = [...chosen]
  const lane = async () => {
    for (let target = queue.shift(); target; target = queue.shift())
      await buildTarget(target, { force, log: say })
  }
  await Promise.all([lane(), lane()])
}

main(process.argv.slice(2)).catch((error: unknown) => {
  say(error instanceof Error ? error.message : String(error))
  process.exit(1)
})
