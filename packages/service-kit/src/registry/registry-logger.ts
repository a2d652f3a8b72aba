// The logger the registry code writes to: any pino logger fits (pino's (obj, msg) call shape).

export interface RegistryLogger {
  debug(obj: object, msg?: string): void
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}
