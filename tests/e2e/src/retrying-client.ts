// What a careful client does with an order whose answer it did not get: it sends it again under the same
// Idempotency-Key (POST /orders takes one), so a retry can never place a second order and a timeout never leaves an
// order the client does not know of. Retried on 502, 503, 504 and on no answer at all, after Retry-After (at most 2 s)
// or 500 ms, until `patienceMs` after the first attempt; what it finally answers is what the client was told.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { scaledMs } from '@meridian/testkit'
import type { ApiResponse } from './client.ts'

const retriedStatuses = new Set([502, 503, 504])

export interface Retries {
  /** requests sent again (each retry counts once) */
  count: number
  /** orders still unanswered after the first patience, sent again once the fault was over, that were then placed */
  placedLate: number
}

/** Whether an answer leaves the outcome open: worth sending again under the same key. */
export const isUnanswered = (status: number): boolean => retriedStatuses.has(status)

export async function withRetries<Body>(
  send: (idempotencyKey: string) => Promise<ApiResponse<Body>>,
  retries: Retries,
  {
    idempotencyKey = randomUUID(),
    patienceMs = scaledMs(30_000),
  }: { idempotencyKey?: string; patienceMs?: number } = {},
): Promise<ApiResponse<Body>> {
  const started = Date.now()
  for (;;) {
    let answer: ApiResponse<Body> | undefined
    let failure: unknown
    try {
      answer = await send(idempotencyKey)
      if (!retriedStatuses.has(answer.status)) return answer
    } catch (error) {
      failure = error
    }
    const retryAfter = Number(answer?.headers.get('retry-after'))
    const waitMs = Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(2000, retryAfter * 1000) : 500
    if (Date.now() + waitMs - started > patienceMs) {
      if (answer) return answer
      throw failure
    }
    retries.count += 1
    await sleep(waitMs)
  }
}
