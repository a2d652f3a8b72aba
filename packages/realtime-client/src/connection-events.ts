// The connection's life in one typed place: the Manager's reconnection events and every namespace socket's own.

import type { Socket } from 'socket.io-client'
import type { AuthFailed, RealtimeNamespace, ServerRestart } from './contracts.ts'

/** What `client.on(event, listener)` hears. Namespace-level events name the namespace first. */
export interface ConnectionEvents {
  /** A namespace socket connected (first time, or again after a reconnect). */
  connect: (namespace: RealtimeNamespace, state: { recovered: boolean }) => void
  /** A namespace socket lost its connection; `io server disconnect` and `io client disconnect` are not retried. */
  disconnect: (namespace: RealtimeNamespace, reason: Socket.DisconnectReason, description?: unknown) => void
  /** A namespace could not connect: the server's middleware message (`Authentication required`, …) or a transport error. */
  connect_error: (namespace: RealtimeNamespace, error: Error & { data?: unknown }) => void
  /** The shared connection starts its `attempt`-th reconnection attempt (1-based). */
  reconnect_attempt: (attempt: number) => void
  /** The shared connection is back after `attempt` attempts. */
  reconnect: (attempt: number) => void
  /** The attempts are exhausted; nothing reconnects by itself any more. */
  reconnect_failed: () => void
  /** A namespace reconnected without connection-state recovery: events may have been missed, fetch them again. */
  resync: (namespace: RealtimeNamespace) => void
  /** The server is shutting down gracefully; the connection will drop and be retried. */
  'server:restart': (namespace: RealtimeNamespace, notice: ServerRestart) => void
  /** The server refused the session's token and is disconnecting the namespace. */
  'auth:failed': (namespace: RealtimeNamespace, failure: AuthFailed) => void
  /** The client's own failures: `token()` or `refreshToken()` threw, or the server refused `auth:refresh`. */
  error: (namespace: RealtimeNamespace, error: Error) => void
}

export type ConnectionEventName = keyof ConnectionEvents

/** A minimal typed emitter (no Node `events`, so it runs in browsers). */
export interface ConnectionEventEmitter {
  on<Name extends ConnectionEventName>(name: Name, listener: ConnectionEvents[Name]): () => void
  off<Name extends ConnectionEventName>(name: Name, listener: ConnectionEvents[Name]): void
  emit<Name extends ConnectionEventName>(name: Name, ...args: Parameters<ConnectionEvents[Name]>): void
  clear(): void
}

export function createConnectionEventEmitter(): ConnectionEventEmitter {
  const listeners = new Map<ConnectionEventName, Set<(...args: never[]) => void>>()
  const emitter: ConnectionEventEmitter = {
    on(name, listener) {
      const set = listeners.get(name) ?? new Set()
      listeners.set(name, set.add(listener))
      return () => emitter.off(name, listener)
    },
    off(name, listener) {
      listeners.get(name)?.delete(listener)
    },
    emit(name, ...args) {
      for (const listener of [...(listeners.get(name) ?? [])]) {
        ;(listener as (...args: unknown[]) => void)(...args)
      }
    },
    clear() {
      listeners.clear()
    },
  }
  return emitter
}
