// What the process opened for the app and closes after it; its own module, so the parts that open clients (the
// upstream discovery, the API-key lookup) need not import runService, which imports the app they are part of.
/**
 * A client the process opened for the app (database pool, Redis, a key ring's timer): closed after the app, once its
 * plugins (consumers, relay, producer) have stopped using it. postgres.js pools end, ioredis clients disconnect,
 * anything with a timer stops.
 */
export type ServiceClient =
  | { end(options: { timeout: number }): Promise<void> }
  | { disconnect(): void | Promise<void> }
  | { stop(): void | Promise<void> }
