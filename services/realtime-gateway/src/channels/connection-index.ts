// This instance's connections by a key (a user's id, a session's hash), to find the few a revocation, a logout or a
// membership change is about without going through every socket held. Most keys have one connection: that one is
// kept as the map's value itself, and a Set is made only for a second (tens of thousands of users are held).

export class ConnectionIndex<Item extends object> {
  readonly #byKey = new Map<string, Item | Set<Item>>()

  add(key: string, item: Item): void {
    const held = this.#byKey.get(key)
    if (held === undefined) this.#byKey.set(key, item)
    else if (held instanceof Set) held.add(item)
    else if (held !== item) this.#byKey.set(key, new Set([held, item]))
  }

  delete(key: string, item: Item): void {
    const held = this.#byKey.get(key)
    if (held === item) {
      this.#byKey.delete(key)
      return
    }
    if (!(held instanceof Set)) return
    held.delete(item)
    if (held.size === 1) this.#byKey.set(key, held.values().next().value as Item)
  }

  /** The key's connections at this moment: a copy, so that ending them while going through it is safe. */
  of(key: string): Item[] {
    const held = this.#byKey.get(key)
    if (held === undefined) return []
    return held instanceof Set ? [...held] : [held]
  }

  /** keys held */
  get size(): number {
    return this.#byKey.size
  }
}
