/**
 * @internal
 * The retention ring: every task that reaches a final state gets a ticket (a counter that only
 * grows) and an entry `(row, flags, finishedAt)` at `ticket & mask`. Three cursors split it:
 *
 * ```text
 *  reuse ──────────── head ──────────────────── tail
 *  │ evicted: rows    │ retained: final tasks   │
 *  │ free for reuse   │ still queryable         │
 * ```
 *
 * Evicting the oldest retained task is `head++` plus bookkeeping read from the entry itself, so
 * it never touches the task's (cold) row unless the task has a side object to drop. A row is
 * evicted exactly when it is final and its ticket is below `head`. An entry whose row was given
 * to a new task early (a reused caller id) is marked stale and skipped by both cursors.
 */

/** Flag bits of an entry; the low 3 bits hold the final state index. */
export const STATE_MASK = 7
export const HAS_EXTRA = 8
export const STALE = 16

export class FinalRing {
  private rows = new Uint32Array(64)
  private flags = new Uint8Array(64)
  private at = new Float64Array(64)
  private mask = 63
  /** Next evicted entry to hand out as a free row. */
  reuse = 0
  /** Oldest retained entry; tickets below it are evicted. */
  head = 0
  /** Next ticket. */
  tail = 0

  /** Retained entries, stale ones included. */
  get retained(): number {
    return this.tail - this.head
  }

  push(row: number, flags: number, finishedAt: number): number {
    if (this.tail - this.reuse > this.mask) this.grow()
    const ticket = this.tail++
    const k = ticket & this.mask
    this.rows[k] = row
    this.flags[k] = flags
    this.at[k] = finishedAt
    return ticket
  }

  markStale(ticket: number): void {
    const k = ticket & this.mask
    this.flags[k] = (this.flags[k] as number) | STALE
  }

  finishedAt(ticket: number): number {
    return this.at[ticket & this.mask] as number
  }

  oldestRow(): number {
    return this.rows[this.head & this.mask] as number
  }

  oldestFlags(): number {
    return this.flags[this.head & this.mask] as number
  }

  oldestAt(): number {
    return this.at[this.head & this.mask] as number
  }

  /** A row freed by eviction, or -1. */
  takeFree(): number {
    while (this.reuse < this.head) {
      const k = this.reuse++ & this.mask
      if (((this.flags[k] as number) & STALE) === 0) return this.rows[k] as number
    }
    return -1
  }

  /** Evicted rows not yet reused (stale entries included). */
  get free(): number {
    return this.head - this.reuse
  }

  /** Calls `f` with each evicted, reusable row. */
  forEachFree(f: (row: number) => void): void {
    for (let t = this.reuse; t < this.head; t++) {
      const k = t & this.mask
      if (((this.flags[k] as number) & STALE) === 0) f(this.rows[k] as number)
    }
  }

  private grow(): void {
    const size = (this.mask + 1) * 2
    // Both halves of the doubled arrays get a copy of the old ones: for every ticket t,
    // (t & newMask) & oldMask === t & oldMask, so each live entry lands at its new index with
    // six block copies instead of a loop over the entries. The other copy is never read: a
    // slot is written by push before its ticket becomes live again.
    const rows = new Uint32Array(size)
    const flags = new Uint8Array(size)
    const at = new Float64Array(size)
    const half = this.mask + 1
    rows.set(this.rows)
    rows.set(this.rows, half)
    flags.set(this.flags)
    flags.set(this.flags, half)
    at.set(this.at)
    at.set(this.at, half)
    this.rows = rows
    this.flags = flags
    this.at = at
    this.mask = size - 1
  }
}
