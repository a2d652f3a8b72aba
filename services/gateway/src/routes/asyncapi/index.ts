// /docs/asyncapi.json and /docs/asyncapi.yaml, beside the OpenAPI /docs: the AsyncAPI document of the domain events
// and the realtime channel, generated from @meridian/contracts once at boot (the JSON is docs/asyncapi.json's text).
import { AsyncApiDocumentBody, asyncApiDocument, asyncApiText } from '@meridian/contracts'
import type { FastifyPluginAsync } from 'fastify'
import { stringify } from 'yaml'

// not the TypeBox provider: the handlers send the document's text, which the response schema describes parsed
export const asyncApiRoutes: FastifyPluginAsync = async (app) => {
  const document = asyncApiDocument()
  const json = asyncApiText(document)
  const yaml = stringify(document)
  const tags = ['operations']

  app.get(
    '/docs/asyncapi.json',
    {
      schema: {
        tags,
        summary: 'the AsyncAPI document (JSON): domain events on Kafka and the realtime channel',
        response: {
          200: {
            description: 'the document, as docs/asyncapi.json holds it',
            content: { 'application/json': { schema: AsyncApiDocumentBody } },
          },
        },
      },
    },
    // the text is sent as it is (a string is not serialized again), so it stays the committed file's
    async (_request, reply) => reply.type('application/json; charset=utf-8').send(json),
  )
  app.get(
    '/docs/asyncapi.yaml',
    {
      schema: {
        tags,
        summary: 'the AsyncAPI document (YAML)',
        response: {
          200: {
            description: 'the same document as YAML',
            // the schema describes the data, which YAML carries as JSON does (clients parse it before reading)
            content: { 'application/yaml': { schema: AsyncApiDocumentBody } },
          },
        },
      },
    },
    async (_request, reply) => reply.type('application/yaml; charset=utf-8').send(yaml),
  )
}
