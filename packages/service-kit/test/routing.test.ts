// The route index behind 405's Allow: which methods a path is served with, read the way OpenAPI reads paths.
import type { RouteOptions } from 'fastify'
import { describe, expect, it } from 'vitest'
import { createRouteIndex } from '../src/routing.ts'

const route = (method: string | string[], url: string) => ({ method, url, handler: () => {} }) as RouteOptions

describe('route index', () => {
  it('when a path is served by several methods, then all of them are allowed', () => {
    const index = createRouteIndex()
    index.add(route(['GET', 'HEAD'], '/things/:id'))
    index.add(route('DELETE', '/things/:id'))
    expect(index.allowedMethods('/things/42')).toEqual(['GET', 'HEAD', 'DELETE'])
  })

  it('when a static path sits beside a parameter of the same depth, then the static one decides what the path allows', () => {
    const index = createRouteIndex()
    index.add(route(['GET', 'HEAD'], '/notifications/:id'))
    index.add(route('POST', '/notifications/read'))
    // GET would route /notifications/read to /:id, but the document lists only POST there
    expect(index.allowedMethods('/notifications/read')).toEqual(['POST'])
    expect(index.allowedMethods('/notifications/42')).toEqual(['GET', 'HEAD'])
  })

  it('when the path is unknown, then nothing is allowed', () => {
    const index = createRouteIndex()
    index.add(route('GET', '/things/:id'))
    expect(index.allowedMethods('/other')).toEqual([])
  })
})
