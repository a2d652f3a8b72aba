// `pnpm create-admin` / scripts/create-admin: makes an administrator (what it does: create-admin-command.ts).
import { runCreateAdminCommand } from './create-admin-command.ts'

process.exitCode = await runCreateAdminCommand(process.argv.slice(2), process.env, process)
