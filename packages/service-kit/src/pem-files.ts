// Certificates and keys named by variables (CONSUL_CACERT, …): file paths to PEM files, read once at start. A file that
// is missing, unreadable or not PEM is a configuration error naming the variable, never a TLS failure later.
import { readFileSync } from 'node:fs'

/** What a PEM file holds at least once: a `-----BEGIN …-----` line (a certificate, a chain, a key). */
const pemBegin = /-----BEGIN [A-Z0-9 ]{1,40}-----/

/** The largest PEM file read: a CA bundle of a few hundred certificates, far more than any engine's. */
const maxPemBytes = 1024 * 1024

/**
 * The PEM text of each variable that names a file (unset ones are skipped), or every problem at once: `VARIABLE:
 * cannot read '<path>' (ENOENT)`, `VARIABLE: '<path>' holds no PEM block`. The paths are shown (a path is no secret);
 * the contents never are.
 */
export function readPemFiles<Name extends string>(
  files: Partial<Record<Name, string | undefined>>,
): { pems: Partial<Record<Name, string>>; problems: string[] } {
  const pems: Partial<Record<Name, string>> = {}
  const problems: string[] = []
  for (const [variable, path] of Object.entries(files) as [Name, string | undefined][]) {
    if (path === undefined || path === '') continue
    let text: string
    try {
      const bytes = readFileSync(path)
      if (bytes.length > maxPemBytes) {
        problems.push(`${variable}: '${path}' is larger than ${maxPemBytes} bytes, not a PEM file`)
        continue
      }
      text = bytes.toString('utf8')
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable'
      problems.push(`${variable}: cannot read '${path}' (${code})`)
      continue
    }
    if (!pemBegin.test(text)) {
      problems.push(`${variable}: '${path}' holds no PEM block (-----BEGIN …-----)`)
      continue
    }
    pems[variable] = text
  }
  return { pems, problems }
}
