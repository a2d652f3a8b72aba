// Orders placed at a steady pace while a fault strikes: each one due at its slot whatever the answers before it, and
// each answer counted — accepted (201, with its order id and when it was sent) or refused (by status, or by the
// error's name when no answer came). Nothing is retried here: a refusal is what the client was told.
import { setTimeout as sleep } from 'node:timers/promises'
import type { PlacedOrder } from '@meridian/contracts'
import type { ApiResponse } from './client.ts'

export interface SteadyOrders {
  sent: number
  /** order id -> when its request was sent (ms since the epoch) */
  accepted: Map<string, number>
  refused: Record<string, number>
}

/** What a request that got no answer is counted as: its cause's code (ECONNREFUSED, …), else the error's name. */
export function failureKey(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined
  if (typeof cause?.code === 'string') return cause.code
  return error instanceof Error ? error.name : 'error'
}

export async function placeSteadily(options: {
  /** how many; or, without it, as long as `more()` says so */
  count?: number
  more?: () => boolean
  ratePerSecond: number
  /** places the i-th order */
  place: (i: number) => Promise<ApiResponse<PlacedOrder>>
}): Promise<SteadyOrders> {
  const accepted = new Map<string, number>()
  const refused: Record<string, number> = {}
  const refuse = (key: string) => {
    refused[key] = (refused[key] ?? 0) + 1
  }
  const started = Date.now()
  const placing: Promise<void>[] = []
  const more = (i: number) => (options.count === undefined ? (options.more?.() ?? false) : i < options.count)
  let i = 0
  for (; more(i); i++) {
    const due = started + (i * 1000) / options.ratePerSecond
    await sleep(Math.max(0, due - Date.now()))
    const sentAt = Date.now()
    placing.push(
      options.place(i).then(
        (answer) => {
          if (answer.status === 201) accepted.set(answer.body.orderId, sentAt)
          else refuse(String(answer.status))
        },
        (error: unknown) => refuse(failureKey(error)),
      ),
    )
  }
  await Promise.all(placing)
  return { sent: i, accepted, refused }
}
