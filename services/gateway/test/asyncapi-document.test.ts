// /docs/asyncapi.json and /docs/asyncapi.yaml: the committed AsyncAPI document, served beside /docs and declared in
// the gateway's own OpenAPI document like its other operations.
import { readFileSync } from 'node:fs'
import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { startGateway, type TestGateway } from './support/gateway.ts'

const committed = readFileSync(new URL('../../../docs/asyncapi.json', import.meta.url), 'utf8')

let gateway: TestGateway
beforeAll(async () => {
  gateway = await startGateway({ routes: [] })
})
afterAll(async () => {
  await gateway?.close()
})

describe('gateway: the AsyncAPI document', () => {
  it('when /docs/asyncapi.json is asked, then it answers the text of docs/asyncapi.json as JSON', async () => {
    const response = await fetch(`${gateway.url}/docs/asyncapi.json`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(await response.text()).toBe(committed)
  })

  it('when /docs/asyncapi.yaml is asked, then it answers the same document as YAML', async () => {
    const response = await fetch(`${gateway.url}/docs/asyncapi.yaml`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/yaml; charset=utf-8')
    expect(parse(await response.text())).toEqual(JSON.parse(committed))
  })

  it("when the gateway's OpenAPI document is read, then it is valid and declares both operations with their responses", async () => {
    const document = (await (await fetch(`${gateway.url}/docs/json`)).json()) as {
      paths: Record<
        string,
        { get?: { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> } }
      >
    }
    const result = await new Validator().validate(document as never)
    expect(result.errors ?? []).toEqual([])
    expect(
      Object.keys(document.paths['/docs/asyncapi.json']?.get?.responses?.['200']?.content ?? {}),
    ).toEqual(['application/json'])
    expect(
      Object.keys(document.paths['/docs/asyncapi.yaml']?.get?.responses?.['200']?.content ?? {}),
    ).toEqual(['application/yaml'])
    // the YAML's schema is the document's, as for JSON: a client (schemathesis too) checks the parsed body against it
    const yamlSchema =
      document.paths['/docs/asyncapi.yaml']?.get?.responses?.['200']?.content?.['application/yaml']
    expect(yamlSchema?.schema).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['asyncapi']),
    })
  })

  it('when the document is sent a POST, then the 405 envelope answers with Allow', async () => {
    const response = await fetch(`${gateway.url}/docs/asyncapi.json`, { method: 'POST', body: '{}' })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toContain('GET')
    expect(await response.json()).toMatchObject({ error: { code: 'METHOD_NOT_ALLOWED' } })
  })
})
