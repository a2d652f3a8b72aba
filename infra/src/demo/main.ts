// scripts/seed and ./scripts/dev --demo: fills a running Meridian with demo data (what it does: command.ts).
import { runSeedCommand } from './command.ts'

process.exitCode = await runSeedCommand(process.argv.slice(2), process.env, process)
