/**
 * @internal
 * The runs this process holds: each claimed row from its claim until its completion (or hand
 * back) commits. The dispatcher adds them, the completion forgets them; the lease guard watches
 * them on the monotonic clock.
 */
import { Wakeup } from "@tickwork/runtime/Wakeup"
import { Effect, Latch } from "effect"
import type { TaskRow } from "./model.ts"

/** One run this process holds. */
export interface Held {
  /** `<id>@<fence>`: one claim. */
  readonly key: string
  /** The row as claimed (slot moved by a claim-time decision). */
  readonly row: TaskRow
  /** The run's number (the START step's). */
  readonly runNumber: number
  started: boolean
  /** When its run started, epoch ms. */
  startedAt: number
  /** Its run ended (its completion is pending). */
  finished: boolean
  /** Its lease was lost: the completion will be fenced out. */
  lost: boolean
  /** Closing: hand it back instead of completing it. */
  releasing: boolean
  /** Monotonic ms when the lease was last known good: when its claim or last renewal was sent. */
  renewedAt: number
  /** Monotonic ms when the run finished (its commit is pending); -1 while it runs. */
  finishedAt: number
  /** The watchdog reported it finished but uncommitted. */
  overdue: boolean
}

/** This process's figures (see `DurableStats`). */
export interface Counters {
  claimed: number
  completed: number
  fencedOut: number
  released: number
  recovered: number
  leasesLost: number
  uncommitted: number
  storeFailures: number
  /** Claims of processes whose database session ended, made due at once by this one. */
  takenOver: number
  /** Times this process lost its database session. */
  sessionsLost: number
}

/** The held runs, by claim and by task id. */
export class HeldRuns {
  private readonly byKey = new Map<string, Held>()
  private readonly byTask = new Map<string, Held>()
  /** Open while runs are held: the lease guard watches them. */
  readonly holding: Latch.Latch
  private drainedWaiter: ((effect: Effect.Effect<void>) => void) | undefined = undefined
  /** Woken each time the last held run is let go (see {@link watch}). */
  private readonly watchers: Array<Wakeup> = []
  private readonly counters: Counters

  constructor(holding: Latch.Latch, counters: Counters) {
    this.holding = holding
    this.counters = counters
  }

  get size(): number {
    return this.byKey.size
  }

  /** Held runs inside their handler: started and not ended. O(held). */
  get inHandler(): number {
    let n = 0
    for (const h of this.byKey.values()) if (h.started && !h.finished) n++
    return n
  }

  values(): IterableIterator<Held> {
    return this.byKey.values()
  }

  /** The run held for task `id`, if any. */
  ofTask(id: string): Held | undefined {
    return this.byTask.get(id)
  }

  /** Holds a run of `row` (claimed when the monotonic clock read `claimedAt`). */
  add(row: TaskRow, runNumber: number, claimedAt: number): Held {
    const h: Held = {
      key: `${row.id}@${row.fence}`,
      row,
      runNumber,
      started: false,
      startedAt: 0,
      finished: false,
      lost: false,
      releasing: false,
      renewedAt: claimedAt,
      finishedAt: -1,
      overdue: false,
    }
    this.byKey.set(h.key, h)
    this.byTask.set(row.id, h)
    this.holding.openUnsafe()
    this.counters.claimed++
    return h
  }

  /** Lets go of a run whose completion (or hand back) committed. */
  forget(h: Held): void {
    if (!this.byKey.delete(h.key)) return
    if (h.overdue) this.counters.uncommitted--
    if (this.byTask.get(h.row.id) === h) this.byTask.delete(h.row.id)
    if (this.byKey.size > 0) return
    this.holding.closeUnsafe()
    for (const w of this.watchers) w.wake()
    const resume = this.drainedWaiter
    if (resume !== undefined) {
      this.drainedWaiter = undefined
      resume(Effect.void)
    }
  }

  /**
   * A wake-up of its own for one periodic watcher of the held runs (the lease guard, the
   * renewer), woken whenever the last run is let go: a watcher waits on it for its interval and,
   * woken with nothing held, has nothing to watch. Its timer then never fires, so a run that
   * claims and commits at one virtual instant costs no wake-up of either.
   */
  watch(): Wakeup {
    const w = new Wakeup()
    this.watchers.push(w)
    return w
  }

  /** Waits until no run is held. */
  readonly drained: Effect.Effect<void> = Effect.callback<void>((resume) => {
    if (this.byKey.size === 0) {
      resume(Effect.void)
      return
    }
    this.drainedWaiter = resume
    return Effect.sync(() => {
      if (this.drainedWaiter === resume) this.drainedWaiter = undefined
    })
  })
}

/** A new, empty table of held runs. */
export const make = (counters: Counters): Effect.Effect<HeldRuns> =>
  Effect.map(Latch.make(false), (holding) => new HeldRuns(holding, counters))
