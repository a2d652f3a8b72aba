// The JSON body parser of every service: strict UTF-8, bounded nesting, then Fastify's own parser (prototype
// poisoning refused). Hostile bodies are refused here, before they reach validation, handlers or the error path.
import { AppError } from '@meridian/contracts'
import type { FastifyInstance, FastifyRequest } from 'fastify'

/**
 * The deepest nesting of arrays and objects a body may have. No schema of ours goes past a handful of levels; the
 * bound keeps recursive code (validation, error details, logging) far from the stack's limit.
 */
export const maxJsonDepth = 64

export const jsonBodyMessages = {
  empty: "Body cannot be empty when content-type is 'application/json'",
  invalidUtf8: 'Request body is not valid UTF-8',
  tooDeep: `JSON nested deeper than ${maxJsonDepth} levels`,
} as const

const utf8 = new TextDecoder('utf-8', { fatal: true })

const openBrace = 0x7b
const openBracket = 0x5b
const closeBrace = 0x7d
const closeBracket = 0x5d
const quote = 0x22
const backslash = 0x5c

/**
 * The deepest nesting in a JSON text, counting brackets outside strings. It stops as soon as `limit` is passed,
 * so an absurd body costs no more than its first levels. Malformed text is left for the parser to refuse.
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0
  let inString = false
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index)
    if (inString) {
      if (char === backslash) index++
      else if (char === quote) inString = false
    } else if (char === quote) {
      inString = true
    } else if (char === openBrace || char === openBracket) {
      if (++depth > limit) return true
    } else if (char === closeBrace || char === closeBracket) {
      depth--
    }
  }
  return false
}

type Done = (error: Error | null, body?: unknown) => void

/** Replaces the app's application/json parser (call before routes are added). */
export function useStrictJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer' },
    (request: FastifyRequest, body: Buffer, done: Done) => {
      if (body.length === 0) return done(AppError.badRequest(jsonBodyMessages.empty))
      let text: string
      try {
        text = utf8.decode(body)
      } catch {
        return done(AppError.badRequest(jsonBodyMessages.invalidUtf8))
      }
      if (jsonDepthExceeds(text, maxJsonDepth)) return done(AppError.badRequest(jsonBodyMessages.tooDeep))
      // secure-json-parse; its errors (malformed, prototype poisoning) are mapped by the error handler
      parseJson(request, text, done)
    },
  )
}
