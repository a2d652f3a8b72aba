// The interface page (docs/reference/interface.md) names every error code the contracts define, each in a row of its
// status table under an HTTP error status, so the page a client reads cannot fall behind a new code.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ErrorCode } from '../src/errors.ts'

/** The status table's rows: each row's status and the codes its second cell names. */
function statusRows(): { status: number; codes: string[] }[] {
  const page = readFileSync(new URL('../../../docs/reference/interface.md', import.meta.url), 'utf8')
  const section = page.slice(page.indexOf('## Statuses and error codes'))
  const table = section.slice(section.indexOf('| status | code | when |'))
  const rows = table.split('\n').slice(2)
  const end = rows.findIndex((row) => !row.startsWith('|'))
  return rows.slice(0, end).map((row) => {
    const [status = '', codes = ''] = row.split('|').slice(1, -1)
    return { status: Number(status.trim()), codes: codes.split('`').filter((_, index) => index % 2 === 1) }
  })
}

describe("the interface page's status table", () => {
  it('when it is read, then every error code of the contracts is in it, and it names no other', () => {
    const named = statusRows().flatMap((row) => row.codes)
    expect(new Set(named)).toEqual(new Set(Object.values(ErrorCode)))
  })

  it('when it is read, then each row is an HTTP error status', () => {
    for (const { status } of statusRows()) expect(status >= 400 && status < 600, String(status)).toBe(true)
  })
})
