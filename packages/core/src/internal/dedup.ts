/**
 * @internal
 * Deduplication keys in the kernel (SPEC §20.3): each key's holder (the last task created under
 * it) and when it was accepted. The decision is `Rules.decideDedup`; this module finds the
 * holder, applies the decision and records it.
 */
import { InvalidOption, type ScheduleError, show } from "../Errors.ts"
import * as Lifecycle from "../Lifecycle.ts"
import * as Rules from "../Rules.ts"
import type { TaskId, TaskState } from "../Task.ts"
import type { Breakers } from "./breakers.ts"
import type { Scheduled, TaskOptions, UpdateOptions } from "./kernelTypes.ts"
import type { Rows } from "./rows.ts"
import { GENERATED } from "./run.ts"
import { updateTask } from "./update.ts"

const { SCHEDULED, RUNNING, PAUSED } = Lifecycle

/** One key's holder: its row and generation (a row is reused once its task is dropped). */
interface Entry {
  readonly row: number
  readonly gen: number
  readonly id: TaskId
  readonly acceptedAt: number
  /** The holder's throttle window, ms (0 for the other modes): until when the entry matters. */
  readonly windowMs: number
}

/** Fewest entries before a sweep: below it forgetting is not worth a pass. */
const MIN_SWEEP = 64

/** @internal The kernel's deduplication keys and their counters (SPEC §20.3). */
export class DedupKeys<J> {
  private readonly byKey = new Map<string, Entry>()
  /** The map's size that sets off the next sweep: twice what the last sweep kept (amortised O(1)). */
  private sweepAt = MIN_SWEEP
  deduplicated = 0
  replaced = 0

  private readonly rows: Rows<J>
  private readonly breakers: Breakers<J>

  constructor(rows: Rows<J>, breakers: Breakers<J>) {
    this.rows = rows
    this.breakers = breakers
  }

  /**
   * Applies `Rules.decideDedup` to a request under `dedup.key` at `now`: the {@link Scheduled}
   * result when it creates nothing (deduplicated, or the holder replaced in place), `undefined`
   * when the caller is to create the task, or the typed error of a bad replacement (then nothing
   * has changed).
   */
  request(
    dedup: Rules.ResolvedDedup,
    options: TaskOptions<J>,
    now: number,
  ): Scheduled | ScheduleError | undefined {
    const e = this.byKey.get(dedup.key)
    const holder =
      e === undefined ? undefined : { id: e.id, state: this.stateOf(e), acceptedAt: e.acceptedAt }
    const decision = Rules.decideDedup(dedup, holder, now)
    if (decision.outcome === "created") return undefined
    if (decision.outcome === "replaced") {
      // The request's options replace the holder's; those it leaves out stay (SPEC §15 update).
      const { id: _id, group: _g, key: _k, dedup: _d, ...changes } = options
      const done = updateTask(
        this.rows,
        this.breakers,
        decision.id,
        changes as UpdateOptions<J>,
        now,
      )
      if (done !== true) return done === false ? undefined : done
      this.replaced++
    } else {
      this.deduplicated++
    }
    const row = (e as Entry).row
    this.rows.pendingOccurrences.push({
      kind: "deduplicated",
      id: decision.id,
      generation: this.rows.t.gen(row),
      key: dedup.key,
      mode: dedup.mode,
      result: decision.outcome,
      at: now,
    })
    return decision
  }

  /** Task `id`, just accepted at `now` under `dedup.key`, is the key's holder now. */
  created(dedup: Rules.ResolvedDedup, id: TaskId, now: number): void {
    const row = this.rows.lookup(id)
    this.byKey.set(dedup.key, {
      row,
      gen: this.rows.t.gen(row),
      id,
      acceptedAt: now,
      windowMs: dedup.windowMs,
    })
    if (this.byKey.size >= this.sweepAt) this.sweep(now)
  }

  /**
   * Moves the holders' acceptance times by `delta` ms after the wall clock stepped (SPEC §2.6),
   * so a throttle window still ends as long after its acceptance as it did. O(keys).
   */
  shift(delta: number): void {
    for (const [key, e] of this.byKey)
      this.byKey.set(key, { ...e, acceptedAt: e.acceptedAt + delta })
  }

  /** Keys with an entry (see `Stats.dedup.tracked`). */
  get tracked(): number {
    return this.byKey.size
  }

  /** Keys whose holder is live (`scheduled`, `running` or `paused`). O(keys). */
  held(): number {
    let n = 0
    for (const e of this.byKey.values()) {
      const s = this.stateOf(e)
      if (s === "scheduled" || s === "running" || s === "paused") n++
    }
    return n
  }

  /**
   * Forgets the keys no decision can use any more: the holder is final or gone and its throttle
   * window (if any) has passed. Memory is then bounded by twice the keys in force.
   */
  private sweep(now: number): void {
    for (const [key, e] of this.byKey) {
      const s = this.rows.t.state(e.row)
      const live = this.isCurrent(e) && (s === SCHEDULED || s === RUNNING || s === PAUSED)
      if (!live && now >= e.acceptedAt + e.windowMs) this.byKey.delete(key)
    }
    this.sweepAt = Math.max(MIN_SWEEP, 2 * this.byKey.size)
  }

  private isCurrent(e: Entry): boolean {
    return this.rows.t.gen(e.row) === e.gen && this.rows.present(e.row)
  }

  private stateOf(e: Entry): TaskState | "unknown" {
    return this.isCurrent(e) ? (Lifecycle.states[this.rows.t.state(e.row)] as TaskState) : "unknown"
  }
}

/**
 * @internal Checks a caller's `id` (SPEC §9): the typed error of one that is empty, not a string
 * or of the generated form `#<n>.<n>`; `undefined` when it is good or absent.
 */
export const badId = (id: unknown): InvalidOption | undefined =>
  id === undefined || (typeof id === "string" && id.length > 0 && !GENERATED.test(id))
    ? undefined
    : new InvalidOption({
        field: "id",
        value: id,
        message: `id must be a non-empty string not of the generated form "#<n>.<n>", got ${show(id)}`,
      })
