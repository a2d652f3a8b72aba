// The logger consumers and replays write to: any pino logger fits (pino's (obj, msg) call shape).

export interface ConsumerLogger {
  debug(obj: object, msg?: string): void
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}
