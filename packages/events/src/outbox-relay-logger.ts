// The logger the outbox relay and its parts write to; its own module, so the parts need not import the relay.
/** Any pino logger fits (pino's (obj, msg) call shape). */
export interface OutboxRelayLogger {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}
