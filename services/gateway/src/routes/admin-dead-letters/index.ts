// /api/v1/admin/dead-letters (admins): every dead-letter topic of the system (its event types', in its namespace) with
// how many events it holds and how many no replay has taken yet, a topic's newest events with the failure headers they
// were parked with, and the replay of its pending events to their original topics. The gateway talks to Kafka for these pages only: nothing
// else it does waits on the broker, and a broker away is the operator's 503. Each replay is recorded in the gateway's
// audit trail.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  AppError,
  type DeadLetterEvent,
  DeadLetterEvents,
  DeadLetterEventsQuery,
  DeadLetterReplay,
  type DeadLetterTopic,
  DeadLetterTopicParams,
  DeadLetterTopics,
  eventCatalogue,
} from '@meridian/contracts'
import {
  type createKafka,
  listDeadLetterTopics,
  ReplayInProgressError,
  readDeadLetters,
  replayDeadLetters,
} from '@meridian/events'
import { errorResponses, security } from '@meridian/service-kit'
import type { onRequestHookHandler } from 'fastify'
import { type GatewayAuditTrail, recordAction } from '../../operations/audit-stream.ts'

export interface AdminDeadLettersOptions {
  kafka(): ReturnType<typeof createKafka>
  /** the system's KAFKA_NAMESPACE: only its topics are shown, by their names without it */
  namespace: string
  /** the gateway's own audit trail: each replay is recorded */
  audit: GatewayAuditTrail
}

export const adminDeadLettersRoutes: FastifyPluginAsyncTypebox<AdminDeadLettersOptions> = async (
  app,
  { kafka, namespace, audit },
) => {
  const adminOnly = [app.authenticate, app.requireRole('admin')] as onRequestHookHandler[]
  const tags = ['operations']
  const local = (name: string) => (name.startsWith(namespace) ? name.slice(namespace.length) : name)

  /** The broker failing is the operator's 503, never a 500; the errors this page gives meaning to pass through. */
  async function fromKafka<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      if (error instanceof AppError) throw error
      if (error instanceof ReplayInProgressError) {
        throw AppError.conflict(
          `A replay of ${local(error.topic)} is already under way; try again when it is done`,
        )
      }
      throw new AppError(503, 'SERVICE_UNAVAILABLE', {
        message: 'Kafka is unavailable',
        retryAfter: 5,
        cause: error,
      })
    }
  }

  /** the system's topics (one per catalogue event type): another run's or a test's on the same broker stay out */
  const systemTopics = Object.keys(eventCatalogue)

  /** The dead-letter topics of these topics of the system (all of them by default), with their counts. */
  async function topics(of: readonly string[] = systemTopics): Promise<DeadLetterTopic[]> {
    const found = await listDeadLetterTopics({ kafka: kafka(), namespace, of })
    return found.map((each) => ({
      ...each,
      topic: local(each.topic),
      originalTopic: local(each.originalTopic),
    }))
  }

  /** One dead-letter topic of the system, counted alone; 404 for any other name. */
  async function topicNamed(name: string): Promise<DeadLetterTopic> {
    const original = name.slice(0, -'.dlt'.length)
    const [topic] = systemTopics.includes(original) ? await topics([original]) : []
    if (!topic) throw AppError.notFound(`Dead-letter topic ${name} not found`)
    return topic
  }

  app.get(
    '/api/v1/admin/dead-letters',
    {
      onRequest: adminOnly,
      schema: {
        tags,
        summary:
          'Every dead-letter topic with how many events it holds and how many are not replayed yet (admins)',
        security: security.requires('admin:read'),
        response: { 200: DeadLetterTopics, ...errorResponses(401, 403, 503) },
      },
    },
    async () => ({ data: await fromKafka(topics) }),
  )

  app.get(
    '/api/v1/admin/dead-letters/:topic/events',
    {
      onRequest: adminOnly,
      schema: {
        tags,
        summary:
          "A dead-letter topic's newest events, newest first, with why and when each was parked (admins)",
        security: security.requires('admin:read'),
        params: DeadLetterTopicParams,
        querystring: DeadLetterEventsQuery,
        response: { 200: DeadLetterEvents, ...errorResponses(401, 403, 404, 422, 503) },
      },
    },
    async (request) =>
      fromKafka(async () => {
        const topic = await topicNamed(request.params.topic)
        const events = await readDeadLetters({
          kafka: kafka(),
          topic: `${namespace}${topic.topic}`,
          limit: request.query.limit,
        })
        return {
          topic,
          data: events.map(
            (event): DeadLetterEvent => ({
              ...event,
              originalTopic: local(event.originalTopic),
              consumerGroup: event.consumerGroup === null ? null : local(event.consumerGroup),
            }),
          ),
        }
      }),
  )

  app.post(
    '/api/v1/admin/dead-letters/:topic/replay',
    {
      onRequest: adminOnly,
      schema: {
        tags,
        summary: "Re-publish a dead-letter topic's pending events to their original topics (admins)",
        description:
          'Takes the events no replay has taken yet (the topic keeps them, marked replayed). Consumers see a replayed ' +
          'event as a redelivery: a group that already processed it skips it. 409 while another replay of the topic runs.',
        security: security.requires('admin:write'),
        params: DeadLetterTopicParams,
        response: { 200: DeadLetterReplay, ...errorResponses(401, 403, 404, 409, 422, 503) },
      },
    },
    async (request) =>
      fromKafka(async () => {
        const { topic: name } = await topicNamed(request.params.topic)
        const { replayed, to } = await replayDeadLetters({
          kafka: kafka(),
          topic: `${namespace}${name}`,
          logger: request.log,
          idleTimeoutMs: 10_000,
        })
        request.log.info({ topic: name, replayed }, 'dead-lettered events replayed by an admin')
        const replayedTo = Object.fromEntries(
          Object.entries(to).map(([target, count]) => [local(target), count]),
        )
        await recordAction(audit, request, {
          action: 'dead_letters.replayed',
          target: `topic:${name}`,
          detail: { replayed, to: replayedTo },
        })
        return { topic: await topicNamed(name), replayed, to: replayedTo }
      }),
  )
}
