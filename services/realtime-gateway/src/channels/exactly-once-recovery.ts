// A recovered socket gets each broadcast of its rooms appended to the stream after its offset exactly once.
//
// Socket.IO recovers a session in three moves: the adapter reads what the session missed from the stream
// (restoreSession; sent before the CONNECT), the socket is made in its rooms, and only after the namespace's
// middlewares (our admission) is it connected — and broadcasts reach connected sockets only. Alone, that loses an
// entry this instance hands to its sockets between the read and the connection (no socket of the session gets it, no
// later read has it: the cluster campaign's missed notifications), and doubles one the read found but this instance's
// stream reader, being behind, hands over after the connection.
// Entries reach an instance's sockets two ways that do not wait for each other (the reader, for other instances'
// appends; at once, for its own), so a second read of the stream could not tell which entries are still on their way.
// The one moment that can is where the adapter hands an entry to its sockets, `addOffsetIfNecessary`, which both ways
// call with the entry's id right before the in-memory broadcast: there an entry handed over during a recovery is kept
// and given to the socket when it connects (if its rooms take it, by the restore's rule), and a recovered socket is
// left out of an entry its restore already sent it.
import type { createAdapter } from '@socket.io/redis-streams-adapter'

/** The adapter of one namespace, with connection-state recovery on the channel's stream. */
export type RecoverableAdapter = ReturnType<ReturnType<typeof createAdapter>>

/** A restored session, as restoreSession gives it: each missed packet's arguments end with its stream id. */
interface RestoredSession {
  sid: string
  rooms: string[]
  missedPackets: unknown[][]
}

/** A broadcast as the cluster adapter hands it to the in-memory broadcast. */
interface BroadcastPacket {
  data: unknown[]
}
interface BroadcastOptions {
  rooms: Set<string>
  except?: Set<string>
}

/** The socket, as seen by the 'connection' of its namespace. */
interface ConnectedSocket {
  id: string
  recovered: boolean
  /** writes a packet to this socket alone (Socket.IO's own way of sending the missed packets) */
  packet(packet: { type: number; data: unknown[] }): void
}

/**
 * What this module uses of the adapter beyond its typed API (socket.io-adapter 2.5's ClusterAdapter, redis-streams-adapter
 * 0.3): checked when the adapter is made, so an upgrade that drops one fails at boot, not silently in a reconnection.
 */
interface AdapterInternals {
  nsp: { on(event: 'connection', listener: (socket: ConnectedSocket) => void): unknown }
  restoreSession(pid: string, offset: string): Promise<RestoredSession | undefined>
  /** called by both ways of an entry onto this instance's sockets, right before the in-memory broadcast */
  addOffsetIfNecessary(packet: BroadcastPacket, opts: BroadcastOptions, offset: string): void
  /** the stream reader hands over each entry of the namespace, in the stream's order (other instances' and ours) */
  onRawMessage(rawMessage: unknown, offset: string): void
  /** a socket leaves all its rooms: when it goes, or when it is dropped before it connected */
  delAll(id: string): void
}

/** Socket.IO's EVENT packet (socket.io-parser's PacketType.EVENT), as the restored session's missed packets are sent. */
const eventPacket = 2

/**
 * Makes the adapter's recoveries exact (see the file's head). Wraps restoreSession as it is, so a guard already on it
 * (guardedRecovery) runs inside the recovery's window.
 */
export function exactlyOnceRecovery(adapter: RecoverableAdapter): RecoverableAdapter {
  const internals = adapter as unknown as AdapterInternals
  for (const method of ['addOffsetIfNecessary', 'onRawMessage', 'delAll', 'restoreSession'] as const) {
    if (typeof internals[method] !== 'function') {
      throw new Error(`the realtime adapter has no ${method}: exactly-once recovery depends on it`)
    }
  }
  const recoveries = new RecoveriesUnderWay()

  const restore = internals.restoreSession.bind(adapter)
  internals.restoreSession = async (pid, offset) => {
    const recovery = recoveries.begin(offset)
    try {
      const session = await restore(pid, offset)
      if (session) recoveries.restored(recovery, session)
      else recoveries.end(recovery)
      return session
    } catch (error) {
      recoveries.end(recovery)
      throw error
    }
  }

  const handOver = internals.addOffsetIfNecessary.bind(adapter)
  internals.addOffsetIfNecessary = (packet, opts, offset) => {
    // before the id is appended to the arguments (to those kept for recovery only; a restore sends every one with it)
    recoveries.handedOver(packet.data, opts, offset)
    handOver(packet, opts, offset)
  }

  const read = internals.onRawMessage.bind(adapter)
  internals.onRawMessage = (rawMessage, offset) => {
    read(rawMessage, offset)
    recoveries.readerReached(offset)
  }

  const leaveAll = internals.delAll.bind(adapter)
  internals.delAll = (id) => {
    recoveries.gone(id)
    leaveAll(id)
  }

  // the namespace's first listener (the adapter is made with the namespace): what the socket missed comes before
  // anything the channels send it
  internals.nsp.on('connection', (socket) => {
    if (socket.recovered) recoveries.connected(socket)
  })
  return adapter
}

/** An entry of the stream as this instance handed it to its sockets. */
interface HandedOver {
  id: string
  /** the event's name and arguments, without the id */
  args: unknown[]
  rooms: Set<string>
  except: Set<string> | undefined
}

/** A session being recovered, from the start of its restore to its socket's connection (or its end). */
interface Recovery {
  /** the client's offset: it has every entry up to it */
  offset: string
  /** the sequence number of the first entry handed over since the restore began */
  from: number
  restored?: {
    sid: string
    rooms: string[]
    /** the ids of the entries the restore sent */
    sent: Set<string>
  }
}

/**
 * The recoveries of one namespace under way on this instance, and the entries handed to its sockets meanwhile (one log
 * for all of them, from the oldest's beginning: many sockets come back at once when an instance goes).
 */
export class RecoveriesUnderWay {
  /** in the order they began, so the first began earliest */
  readonly #underWay = new Set<Recovery>()
  /** those restored, by socket id, until their socket connects or goes */
  readonly #bySid = new Map<string, Recovery>()
  readonly #log: HandedOver[] = []
  /** the sequence number of #log[0] */
  #logStart = 0
  /** entries a restore sent that the stream reader has not reached yet: their ids, and the sockets sent them */
  readonly #sentAhead = new Map<string, Set<string>>()
  /** the last entry of the namespace the stream reader handed over */
  #readerAt: string | undefined

  /** How many handed-over entries are kept: none once no recovery is under way. */
  get keptEntries(): number {
    return this.#log.length
  }

  /**
   * Before the restore reads: an entry it does not read is appended after that read, and so handed over after this.
   */
  begin(offset: string): Recovery {
    const recovery: Recovery = { offset, from: this.#logStart + this.#log.length }
    this.#underWay.add(recovery)
    return recovery
  }

  restored(recovery: Recovery, session: RestoredSession): void {
    const sent = new Set(session.missedPackets.map((args) => String(args.at(-1))))
    recovery.restored = { sid: session.sid, rooms: session.rooms, sent }
    this.#bySid.set(session.sid, recovery)
  }

  /** Not restored, or its socket dropped before it connected. */
  end(recovery: Recovery): void {
    this.#underWay.delete(recovery)
    if (recovery.restored && this.#bySid.get(recovery.restored.sid) === recovery) {
      this.#bySid.delete(recovery.restored.sid)
    }
    this.#forgetHandedOverBefore(this.#underWay.values().next().value?.from)
  }

  /** An entry is handed to this instance's sockets (the in-memory broadcast follows at once). */
  handedOver(args: readonly unknown[], opts: BroadcastOptions, id: string): void {
    if (this.#underWay.size > 0) {
      this.#log.push({ id, args: args.slice(), rooms: opts.rooms, except: opts.except })
    }
    const sentTo = this.#sentAhead.get(id)
    if (sentTo) {
      // each entry is handed over once on an instance: none later needs these
      this.#sentAhead.delete(id)
      opts.except = new Set([...(opts.except ?? []), ...sentTo])
    }
  }

  /** The socket of a restored session connected: from now on, broadcasts reach it. */
  connected(socket: ConnectedSocket): void {
    const recovery = this.#bySid.get(socket.id)
    if (!recovery?.restored) return
    const { rooms, sent } = recovery.restored
    const missed = this.#log
      .slice(recovery.from - this.#logStart)
      .filter(
        (entry) => isAfter(entry.id, recovery.offset) && !sent.has(entry.id) && sessionTakes(rooms, entry),
      )
      .sort((one, other) => compareIds(one.id, other.id))
    for (const entry of missed) socket.packet({ type: eventPacket, data: [...entry.args, entry.id] })
    for (const id of sent) {
      if (this.#readerAt === undefined || isAfter(id, this.#readerAt)) {
        const sentTo = this.#sentAhead.get(id) ?? new Set<string>()
        this.#sentAhead.set(id, sentTo.add(socket.id))
      }
    }
    this.end(recovery)
  }

  /** A socket leaves all its rooms: a restored one that never connected is no longer recovered. */
  gone(sid: string): void {
    const recovery = this.#bySid.get(sid)
    if (recovery) this.end(recovery)
  }

  /** The stream reader handed over the namespace's entry `id`: it will hand over none up to it again. */
  readerReached(id: string): void {
    this.#readerAt = id
    if (this.#sentAhead.size === 0) return
    for (const sentId of this.#sentAhead.keys()) {
      if (!isAfter(sentId, id)) this.#sentAhead.delete(sentId)
    }
  }

  #forgetHandedOverBefore(from: number | undefined): void {
    const keepFrom = from ?? this.#logStart + this.#log.length
    this.#log.splice(0, keepFrom - this.#logStart)
    this.#logStart = keepFrom
  }
}

/** Whether a session in `rooms` takes a broadcast: the streams adapter's own rule for a session's missed packets. */
function sessionTakes(rooms: string[], { rooms: to, except }: HandedOver): boolean {
  const included = to.size === 0 || rooms.some((room) => to.has(room))
  return included && !rooms.some((room) => except?.has(room))
}

/** The order of two stream ids (`<milliseconds>-<sequence>`): negative when `id` comes first. */
function compareIds(id: string, other: string): number {
  const [ms = 0, sequence = 0] = id.split('-').map(Number)
  const [otherMs = 0, otherSequence = 0] = other.split('-').map(Number)
  return ms !== otherMs ? ms - otherMs : sequence - otherSequence
}

const isAfter = (id: string, other: string): boolean => compareIds(id, other) > 0
