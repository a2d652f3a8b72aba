// One clock for many moments (the credentials of tens of thousands of sockets each have one): the items' next moments
// in a binary heap and a single Node timer for the earliest.

/** setTimeout's longest delay; a later moment is reached in several steps */
const maxTimerMs = 2 ** 31 - 1

/** What the clock times: its moment and its place are kept on it, so that nothing else is made per item. */
export interface Timed {
  /** when the clock runs reached(): epoch ms */
  due: number
  /** its place in the clock's heap; -1 when not scheduled */
  slot: number
  reached(): void
}

/**
 * Items' next moments in one binary heap (earliest first) with one timer for the earliest: a Node timer per socket
 * costs it ~200 bytes more than its place here. Each item knows its slot, so a refresh or a disconnection takes it out
 * at once.
 */
export class WatchClock<Item extends Timed = Timed> {
  readonly #heap: Item[] = []
  #timer: NodeJS.Timeout | undefined
  #armedFor = Number.POSITIVE_INFINITY

  /** The watch is due at `moment` (replacing what it was due for). */
  schedule(watch: Item, moment: number): void {
    if (watch.slot >= 0) this.#remove(watch.slot)
    watch.due = moment
    watch.slot = this.#heap.length
    this.#heap.push(watch)
    this.#up(watch.slot)
    this.#arm()
  }

  cancel(watch: Item): void {
    if (watch.slot < 0) return
    this.#remove(watch.slot)
    this.#arm()
  }

  get size(): number {
    return this.#heap.length
  }

  readonly #fire = (): void => {
    this.#timer = undefined
    this.#armedFor = Number.POSITIVE_INFINITY
    const now = Date.now()
    for (let first = this.#heap[0]; first !== undefined && first.due <= now; first = this.#heap[0]) {
      this.#remove(0)
      // a watch's step schedules its next one (or fails the socket): nothing here depends on what it does
      first.reached()
    }
    this.#arm()
  }

  #arm(): void {
    const first = this.#heap[0]
    if (first === undefined) {
      clearTimeout(this.#timer)
      this.#timer = undefined
      this.#armedFor = Number.POSITIVE_INFINITY
      return
    }
    if (this.#timer !== undefined && first.due === this.#armedFor) return
    clearTimeout(this.#timer)
    this.#armedFor = first.due
    // past setTimeout's range the timer fires early, finds nothing due and waits again
    this.#timer = setTimeout(this.#fire, Math.min(Math.max(0, first.due - Date.now()), maxTimerMs))
    // the server's own handles keep the process alive; the credentials of its sockets do not
    this.#timer.unref()
  }

  #remove(slot: number): void {
    const heap = this.#heap
    const removed = heap[slot]!
    const last = heap.pop()!
    removed.slot = -1
    if (last === removed) return
    heap[slot] = last
    last.slot = slot
    this.#down(slot)
    this.#up(last.slot)
  }

  #up(slot: number): void {
    const heap = this.#heap
    const watch = heap[slot]!
    while (slot > 0) {
      const parentSlot = (slot - 1) >> 1
      const parent = heap[parentSlot]!
      if (parent.due <= watch.due) break
      heap[slot] = parent
      parent.slot = slot
      slot = parentSlot
    }
    heap[slot] = watch
    watch.slot = slot
  }

  #down(slot: number): void {
    const heap = this.#heap
    const watch = heap[slot]!
    for (;;) {
      const left = 2 * slot + 1
      if (left >= heap.length) break
      const right = left + 1
      const child = right < heap.length && heap[right]!.due < heap[left]!.due ? right : left
      if (heap[child]!.due >= watch.due) break
      heap[slot] = heap[child]!
      heap[slot]!.slot = slot
      slot = child
    }
    heap[slot] = watch
    watch.slot = slot
  }
}
