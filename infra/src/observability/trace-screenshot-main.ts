// `pnpm --filter @meridian/infra trace-screenshot ...`: a PNG of a trace in the development Jaeger's trace view.
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { TraceScreenshotError, traceScreenshot } from './trace-screenshot.ts'

const usage = `usage: pnpm --filter @meridian/infra trace-screenshot --out FILE.png (--trace ID | --service NAME [--tag K=V]...)

Opens one trace in the trace view at the Jaeger's UI address in headless Chromium (1600x1000) and writes a PNG once
its waterfall is drawn.

  --jaeger URL      the Jaeger (default http://127.0.0.1:16686, the one ./scripts/dev runs)
  --trace ID        the trace to show
  --service NAME    or: the latest trace of this service in the last hour ...
  --tag K=V         ... that has this tag (repeatable), e.g. --tag messaging.kafka.message.key=<order id>
  --open TEXT       open the details of the spans whose operation contains TEXT
  --out FILE        where the PNG goes (relative to the directory the command was run from)`

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    // `pnpm run script -- args` hands the `--` on
    args: argv[0] === '--' ? argv.slice(1) : argv,
    options: {
      jaeger: { type: 'string', default: 'http://127.0.0.1:16686' },
      trace: { type: 'string' },
      service: { type: 'string' },
      tag: { type: 'string', multiple: true, default: [] },
      open: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help || !values.out || (!values.trace && !values.service)) {
    process.stderr.write(`${usage}\n`)
    return values.help ? 0 : 2
  }
  const tags: Record<string, string> = {}
  for (const pair of values.tag) {
    const at = pair.indexOf('=')
    if (at < 1) throw new TraceScreenshotError(`--tag takes key=value (got '${pair}')`)
    tags[pair.slice(0, at)] = pair.slice(at + 1)
  }
  // pnpm --filter runs this in infra/; a relative --out means where the command was typed
  const out = resolve(process.env.INIT_CWD ?? process.cwd(), values.out)
  const shot = await traceScreenshot({
    jaegerUrl: values.jaeger,
    traceId: values.trace,
    service: values.service,
    tags,
    open: values.open,
    out,
  })
  process.stdout.write(`trace ${shot.traceId}: ${shot.out} (${shot.bytes} bytes)\n`)
  return 0
}

try {
  process.exitCode = await main(process.argv.slice(2))
} catch (error) {
  process.stderr.write(`trace-screenshot: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = error instanceof TraceScreenshotError || error instanceof TypeError ? 1 : 2
}
