/**
 * @internal
 * What the parts of one durable scheduler share: its store, options and clocks, the runs it
 * holds, its worker pool and the queue of finished runs, its figures and its occurrence stream.
 * `DurableScheduler.make` builds one; each part (dispatcher, leases, completion, upkeep) reads it.
 */
import { Random as CoreRandom, type Random, type Task } from "@tickwork/core"
import type { Metrics, WorkerPool } from "@tickwork/runtime"
import { Wakeup } from "@tickwork/runtime/Wakeup"
import type { Clock, Queue } from "effect"
import type { StoreCorrupt } from "../Errors.ts"
import type { TaskStoreShape } from "../TaskStore.ts"
import type { Counters, Held, HeldRuns } from "./held.ts"
import type { EventEntry, RunEntry } from "./model.ts"
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

/**
 * The dispatcher's wake-up (the runtime's, which its timing actor waits on too): it waits
 * between passes; inserts, completions and polls wake it. Its `wakeBefore` is the time the
 * dispatcher sleeps toward: -Infinity while it works, +Infinity while it decides how long.
 */
export { Wakeup }

/**
 * What every user of a store that decides for its tasks shares: the store, the resolved options,
 * the owner it records, the clocks, the push order and the stream it publishes to. The controls
 * (pause, resume, update) read only these ({@link ControlEnv}), so a tool (`StoreAdmin`) builds
 * just this, with {@link base}; a scheduler builds it the same way and adds its running parts
 * ({@link Env}).
 */
export interface Base {
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
  /**
   * Publishes `o` on the occurrence stream (a scheduler also counts it in the metrics: slots
   * missed). The caller passes `handler`, the task's handler, when it has the task's row: it
   * labels the count (else the held run's handler, else `"unknown"`).
   */
  readonly publish: (o: Occurrence, handler?: string | undefined) => void
}

/** What the controls (pause, resume, update) read of an environment. */
export type ControlEnv = Pick<Base, "store" | "options" | "owner" | "now" | "nextSeq" | "publish">

/**
 * The shared parts over `store` with `options`, reading `clock` (the scheduler's or the tool's):
 * `nextSeq` is increasing and at least the wall clock in µs (`now() * 1000`), so a row pushed
 * later by any process sorts after the rows pushed before it (SPEC §4).
 */
export const base = (
  store: TaskStoreShape,
  options: Options.Resolved,
  clock: Clock.Clock,
  publish: (o: Occurrence, handler?: string | undefined) => void,
): Base => {
  const now = () => clock.currentTimeMillisUnsafe()
  let lastSeq = 0
  return {
    store,
    options,
    owner: options.owner,
    now,
    mono: () => Number(clock.currentTimeNanosUnsafe()) / 1e6,
    nextSeq: () => {
      lastSeq = Math.max(lastSeq + 1, now() * 1000)
      return lastSeq
    },
    random: CoreRandom.seeded(options.seed),
    publish,
  }
}

/** A scheduler's figures, all zero. */
export const counters = (): Counters => ({
  claimed: 0,
  completed: 0,
  fencedOut: 0,
  released: 0,
  recovered: 0,
  leasesLost: 0,
  uncommitted: 0,
  storeFailures: 0,
  takenOver: 0,
  sessionsLost: 0,
})

/** One durable scheduler's shared parts: the {@link Base} and its running parts. */
export interface Env extends Base {
  readonly counters: Counters
  readonly held: HeldRuns
  readonly outage: Outage
  readonly wakeup: Wakeup
  readonly pool: WorkerPool.WorkerPool<Held>
  readonly finished: Queue.Queue<Finished>
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
  /**
   * Whether the dispatcher may leave claimable work for want of a worker: true while it works,
   * and while it waits with no worker free (it then waits for no due time). A run's end wakes
   * it only then; otherwise it claimed everything due and its timer is set for what comes next.
   */
  readonly dispatch: { wantsWorker: boolean }
}
