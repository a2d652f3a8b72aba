// What the channels may ask of the live state every instance shares: chat presence, connection limits per address and
// users' action rates. The rule: Redis stores are data/ (they keep state, as the repositories do), and entry points
// (channels/, routes/, events/) never import data/. This module declares the stores as the channels use them (ports);
// data/'s stores fit these shapes without importing them (data/ never imports domain/), and app.ts hands the one to
// the other, so the compiler checks the fit where they meet.

/** A user present in a chat room. */
export interface PresentUser {
  roomId: string
  userId: string
  username: string
}

/** Who is present in each chat room, across instances, with an offline grace before a departure counts. */
export interface Presence {
  /** REALTIME_OFFLINE_GRACE_MS: how long a user whose last socket left stays present */
  readonly graceMs: number
  /** One more socket of the user in the room; whether they were present already. */
  arrive(user: PresentUser): Promise<{ wasPresent: boolean }>
  /** One socket of the user left the room; whether it was their last, and when their grace ends. */
  depart(roomId: string, userId: string): Promise<{ lastSocket: boolean; deadline?: number }>
  /** The users whose grace ended, each claimed by exactly one instance: they have left. */
  sweep(): Promise<PresentUser[]>
  online(roomId: string): Promise<PresentUser[]>
}

/** The connection limits per client address (spec: Limits), counted across instances. */
export interface ConnectionLimits {
  /** Counts one attempt of `address`; false when it is over its attempts in the current window. */
  attempt(address: string): Promise<boolean>
  /** Holds one of `address`'s concurrent slots for `connectionId`; false when all are held. */
  acquire(address: string, connectionId: string): Promise<boolean>
  release(address: string, connectionId: string): Promise<void>
  /** stops renewing (the slots of this instance expire with their lease, or were released) */
  close(): void
}

/** Allowed, or refused until the window ends. */
export type Taken = { allowed: true } | { allowed: false; retryAfterSeconds: number }

/** A user's actions per window, counted across instances. */
export interface UserRate {
  /**
   * Counts one action of the user: allowed while the window's count is within the limit. At once when this instance
   * knows the window (a promise only for a user's first action of a window, while Redis is asked).
   */
  take(userId: string): Taken | Promise<Taken>
}
