// Correlation by process: a process's command carries the stamp of the instance and step that asked (the `process`
// header), and every event its handler writes in its transaction carries that stamp back (the `process-answer`
// header), as the trace context travels: the consumer runs the handler in the stamp's scope, the outbox stores it with
// each row, the relay sends it. The answering service never sees, stores or names it; the process manager routes the
// answer by it. Only a command's stamp is carried on: an answer's own events (an answer read by a third service) carry
// none, so a chain of choreographed events never passes on another step's stamp.
import { AsyncLocalStorage } from 'node:async_hooks'
import { maxProcessStampLength, ProcessStamp } from '@meridian/contracts'
import type { IHeaders } from 'kafkajs'
import { Compile } from 'typebox/compile'
import { headerText } from './kafka.ts'

export type { ProcessStamp } from '@meridian/contracts'

const stampCheck = Compile(ProcessStamp)

export const ProcessHeader = {
  /** on a process's command: the instance and step that asked */
  command: 'process',
  /** on each event written in reply to a command: the command's stamp */
  answer: 'process-answer',
} as const

/** The stamp a header holds; undefined when absent, too long, not JSON or not a stamp (a malformed one is ignored). */
export function stampIn(headers: IHeaders | undefined, name: string): ProcessStamp | undefined {
  const text = headerText(headers, name)
  if (text === undefined || text.length > maxProcessStampLength) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  return stampCheck.Check(parsed) ? parsed : undefined
}

/** A stamp as its header's value; a stamp that does not fit the header is a programming error of the process. */
export function stampText(stamp: ProcessStamp): string {
  if (!stampCheck.Check(stamp)) {
    throw new RangeError(`not a process stamp: ${JSON.stringify(stamp).slice(0, 200)}`)
  }
  const text = JSON.stringify({ type: stamp.type, key: stamp.key, step: stamp.step, attempt: stamp.attempt })
  if (text.length > maxProcessStampLength)
    throw new RangeError('the process stamp is too long for its header')
  return text
}

const answering = new AsyncLocalStorage<ProcessStamp>()

/** Runs `work` (a handler) so that every event it appends to the outbox answers `stamp`; as it is when none. */
export function inAnswerTo<T>(stamp: ProcessStamp | undefined, work: () => T): T {
  return stamp === undefined ? answering.exit(work) : answering.run(stamp, work)
}

/** The command the code running now answers (its handler's message's `process` stamp), if any. */
export const answeredStamp = (): ProcessStamp | undefined => answering.getStore()
