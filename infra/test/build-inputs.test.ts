// A build's inputs (infra/src/build/inputs.ts): the folders a target's digest covers are its own and those of the
// workspace packages it needs in production, so that a change elsewhere keeps its build/<name> and its image
// (scripts/images keys images by this digest); and a bundle that reads outside them stops the build.
import type { Metafile } from 'esbuild'
import { describe, expect, it } from 'vitest'
import { checkInputsCovered, inputRoots, inputsDigest } from '../src/build/inputs.ts'
import { type BuildTarget, buildTargets } from '../src/build/targets.ts'

const target = (name: string): BuildTarget => {
  const found = buildTargets().find((candidate) => candidate.name === name)
  if (!found) throw new Error(`no build target ${name}`)
  return found
}

/** A metafile that read these files (paths from the repository's root, as esbuild names them from its cwd). */
const metafileOf = (files: string[]): Metafile => ({
  inputs: Object.fromEntries(files.map((file) => [file, { bytes: 1, imports: [] }])),
  outputs: {},
})

describe("a build target's inputs", () => {
  it('when a service is built, then its inputs are its folder, the packages it depends on in production and the shared ones, not the others', () => {
    const order = inputRoots(target('order'))
    expect(order).toEqual(
      expect.arrayContaining([
        'services/order',
        'packages/process',
        'packages/events',
        'packages/service-kit',
        'pnpm-lock.yaml',
        'infra/src/build',
      ]),
    )
    expect(order).not.toContain('packages/mail')
    expect(order).not.toContain('packages/testkit')
    expect(order).not.toContain('services/notification')
    expect(inputRoots(target('notification'))).toContain('packages/mail')
    expect(inputRoots(target('gateway'))).toEqual(
      expect.arrayContaining(['apps/console', 'packages/realtime-client']),
    )
  })

  it('when two targets share no folder of their own, then their digests differ, and the same target digests the same twice', () => {
    expect(inputsDigest(target('order'))).toBe(inputsDigest(target('order')))
    expect(inputsDigest(target('order'))).not.toBe(inputsDigest(target('shipping')))
  })

  it('when the bundle read a workspace file outside the inputs, then the build stops naming it; node_modules and its own files pass', () => {
    const order = target('order')
    expect(() =>
      checkInputsCovered(
        order,
        metafileOf([
          'services/order/src/main.ts',
          'node_modules/.pnpm/x/index.js',
          'packages/process/src/index.ts',
        ]),
        [],
      ),
    ).not.toThrow()
    expect(() => checkInputsCovered(order, metafileOf(['packages/mail/src/index.ts']), [])).toThrow(
      /order: the bundle reads packages\/mail\/src\/index.ts, outside its inputs/,
    )
  })
})
