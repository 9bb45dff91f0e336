/**
 * @internal
 * What the parts of one durable scheduler share: its store, options and clocks, the runs it
 * holds, its worker pool and the queue of finished runs, its figures and its occurrence stream.
 * `DurableScheduler.make` builds one; each part (dispatcher, leases, completion, upkeep) reads it.
 */
import type { Random, Task } from "@tickwork/core"
import type { Metrics, WorkerPool } from "@tickwork/runtime"
import { Effect, type Queue } from "effect"
import type { StoreCorrupt } from "../Errors.ts"
import type { EventEntry, RunEntry, TaskStoreShape } from "../TaskStore.ts"
import type { Counters, Held, HeldRuns } from "./held.ts"
import type * as Options from "./options.ts"
import type { Outage } from "./outage.ts"

/** A ledger record: a run that completed, or an event. */
export type Occurrence = (RunEntry & { readonly kind: "ran" }) | EventEntry

/** A run that ended on the pool, waiting for its completion to commit. */
export interface Finished {
  readonly held: Held
  /** `undefined` for a run that never started and is handed back. */
  readonly outcome: Task.Outcome | undefined
  readonly startedAt: number
  readonly finishedAt: number
}

/** The dispatcher's wake-up: it parks between passes; inserts, completions and polls wake it. */
export class Wakeup {
  private parked: ((effect: Effect.Effect<void>) => void) | undefined = undefined
  /** A wake that came while the dispatcher was not parked: its next park returns at once. */
  requested = false
  /** The time the dispatcher sleeps toward; -Infinity while it works, +Infinity while deciding. */
  sleepingUntil = Number.NEGATIVE_INFINITY

  /** Wakes the dispatcher now, or makes its next park return at once. */
  wake(): void {
    const resume = this.parked
    if (resume !== undefined) {
      this.parked = undefined
      resume(Effect.void)
    } else this.requested = true
  }

  /** Whether it is parked with no wake pending. */
  get idle(): boolean {
    return this.parked !== undefined && !this.requested
  }

  /** Parks until {@link wake}. */
  readonly park: Effect.Effect<void> = Effect.callback<void>((resume) => {
    if (this.requested) {
      this.requested = false
      resume(Effect.void)
      return
    }
    this.parked = resume
    return Effect.sync(() => {
      if (this.parked === resume) this.parked = undefined
    })
  })
}

/** One durable scheduler's shared parts. */
export interface Env {
  readonly store: TaskStoreShape
  readonly options: Options.Resolved
  readonly owner: string
  /** Wall-clock epoch ms (Effect's Clock): the store's times. */
  readonly now: () => number
  /** Monotonic ms (live: `performance.now`; under `TestClock`: virtual): leases. */
  readonly mono: () => number
  /** Push order (SPEC §4) for rows this process writes: increasing, ahead of earlier runs. */
  readonly nextSeq: () => number
  /** Retry jitter. */
  readonly random: Random.Random
  readonly counters: Counters
  readonly held: HeldRuns
  readonly outage: Outage
  readonly wakeup: Wakeup
  readonly pool: WorkerPool.WorkerPool<Held>
  readonly finished: Queue.Queue<Finished>
  /**
   * Publishes `o` on the occurrence stream and counts it in the metrics (slots missed). The
   * caller passes `handler`, the task's handler, when it has the task's row: it labels the
   * count (else the held run's handler, else `"unknown"`).
   */
  readonly publish: (o: Occurrence, handler?: string | undefined) => void
  /** The run metrics of runs of `handler` under the scheduler's name (its `handler` label). */
  readonly runSeries: (handler: string) => Metrics.RunSeries
  /**
   * Whether this process holds its database session (a shared store's liveness lock): it
   * claims only while it does. Always true for a store without sessions (SQLite).
   */
  readonly session: { held: boolean }
  /** Closing: no new tasks are accepted, no new runs claimed. */
  readonly closing: { closed: boolean }
  /**
   * Set once when the store is found damaged (`StoreCorrupt`): claiming stops, the close waits
   * for nothing, and the scheduler's program fails with it.
   */
  readonly fatal: { error: StoreCorrupt | undefined }
  /** When a run last began on this process (epoch ms; `undefined`: none yet). Health reads it. */
  readonly progress: { lastStartedAt: number | undefined }
}
