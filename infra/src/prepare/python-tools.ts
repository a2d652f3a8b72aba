// Python tools from PyPI, each pinned and installed once into a virtual environment of its own in the cache folder
// (with that environment's pip, whatever the system Python has): schemathesis for the API fuzzing, podman-compose for
// the system from images where podman stands in for Docker (Debian's 1.0.3 knows neither profiles nor depends_on
// conditions).
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { layoutFromEnv } from '../layout.ts'
import { MissingPrerequisite } from '../missing-prerequisite.ts'
import { runLogged } from '../processes.ts'
import type { PrerequisiteStep, Purpose } from './prerequisite.ts'

export interface PythonTool {
  name: 'schemathesis' | 'podman-compose'
  version: string
  purposes: readonly Purpose[]
}

export const pythonTools: Record<PythonTool['name'], PythonTool> = {
  schemathesis: { name: 'schemathesis', version: '4.32.5', purposes: ['fuzz'] },
  'podman-compose': { name: 'podman-compose', version: '1.6.0', purposes: ['containers'] },
}

const toolDir = (tool: PythonTool): string =>
  join(layoutFromEnv().cacheDir, 'tools', `${tool.name}-${tool.version}`)
// the marker is written last: an install that broke off is redone, not half used
const marker = (tool: PythonTool): string => join(toolDir(tool), '.installed')

/** The tool's command in its environment; MissingPrerequisite before the preparation installed it. */
export function pythonToolPath(name: PythonTool['name']): string {
  const tool = pythonTools[name]
  if (!existsSync(marker(tool)))
    throw new MissingPrerequisite(
      `${name} ${tool.version}`,
      'installs it once from PyPI into the cache folder',
    )
  return join(toolDir(tool), 'bin', name)
}

export function pythonToolStep(tool: PythonTool): PrerequisiteStep {
  return {
    name: tool.name,
    title: `${tool.name} ${tool.version} (PyPI)`,
    purposes: tool.purposes,
    needs: ['debian'],
    async present() {
      return existsSync(marker(tool)) ? toolDir(tool) : undefined
    },
    async obtain({ logFile }) {
      const dir = toolDir(tool)
      rmSync(dir, { recursive: true, force: true })
      await runLogged('python3', ['-m', 'venv', dir], { logFile })
      await runLogged(
        join(dir, 'bin', 'pip'),
        ['install', '--quiet', '--disable-pip-version-check', '--no-input', `${tool.name}==${tool.version}`],
        { logFile },
      )
      writeFileSync(marker(tool), `${tool.name}==${tool.version}\n`)
      return dir
    },
  }
}
