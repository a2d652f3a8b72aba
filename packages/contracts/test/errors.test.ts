import { Value } from 'typebox/value'
import { describe, expect, it } from 'vitest'
import { AppError, ErrorCode, ErrorEnvelope } from '../src/errors.ts'

describe('AppError', () => {
  it('when created without a message, then it carries the spec default text of its code', () => {
    expect(AppError.notFound().message).toBe('Resource not found')
    expect(AppError.forbidden().message).toBe('Insufficient permissions')
    expect(AppError.rateLimited()).toMatchObject({
      statusCode: 429,
      code: ErrorCode.RATE_LIMITED,
      retryAfter: 60,
    })
    expect(new AppError(500, ErrorCode.INTERNAL_ERROR).message).toBe('An unexpected error occurred')
  })

  it('when an envelope lacks requestId or uses a lower-case code, then it does not match the schema', () => {
    const good = {
      success: false,
      error: {
        code: 'NOT_FOUND',
        message: 'Resource not found',
        requestId: 'r1',
        timestamp: new Date().toISOString(),
      },
    }
    expect(Value.Check(ErrorEnvelope, good)).toBe(true)
    expect(Value.Check(ErrorEnvelope, { ...good, error: { ...good.error, requestId: undefined } })).toBe(
      false,
    )
    expect(Value.Check(ErrorEnvelope, { ...good, error: { ...good.error, code: 'not_found' } })).toBe(false)
  })
})
