/**
 * @internal
 * The row model: the shapes of what the task store keeps and exchanges (a task's row, its
 * breaker's row, the ledger's runs and events, the changes a commit applies and what it did).
 * Every part of durable imports these from here; `TaskStore` re-exports them as its public
 * models. This module imports no other module of durable but `Errors`, so nothing that reads a
 * row depends on the store's assembly (no import cycle through `TaskStore`).
 *
 * Column mapping (these shapes to and from SQL rows) is `codec.ts`, which imports this module.
 */
import type { Breaker, MissedRun, Random, Retry, Rules, Schedule, Task } from "@tickwork/core"
import type { Effect, Queue } from "effect"
import type { StoreError } from "../Errors.ts"

/**
 * One task as stored.
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskRow {
  readonly id: string
  /** Raised each time the id is reused after its previous task ended. */
  readonly generation: number
  readonly handler: string
  /** The payload as encoded by the handler's schema, JSON text. */
  readonly payload: string
  /** The schedule as stored (the core's encoded form). */
  readonly schedule: Schedule.Encoded
  /** The schedule's plan, read back from {@link schedule}; `undefined` for a one-shot. */
  readonly plan: Schedule.Plan | undefined
  /** 0 = high, 1 = normal, 2 = low (the core's priority ranks). */
  readonly priority: number
  readonly retry: Retry.Resolved
  readonly missedRuns: MissedRun.MissedRunPolicy
  /** `pauseAfterConsecutiveFailures`; 0 = never. */
  readonly pauseAfter: number
  /** Run timeout in ms; 0 = none. */
  readonly timeoutMs: number
  readonly state: Task.TaskState
  readonly slot: number
  /** When the pending attempt is due (the slot, or a retry's time), epoch ms. */
  readonly runAt: number
  /**
   * When the row can be claimed (SQL `due_at`), epoch ms: its {@link runAt} while scheduled,
   * its lease deadline while running (read as such through `Rows.leaseUntil`), so a dead
   * owner's runs are simply due again.
   */
  readonly claimableAt: number
  /** 1-based attempt of the slot. */
  readonly attempt: number
  /** Runs whose completion committed. */
  readonly runNumber: number
  readonly consecutiveFailures: number
  /** Claims of the pending (slot, attempt): more than 1 after a crash or a lost lease. */
  readonly deliveries: number
  readonly fence: number
  readonly leaseOwner: string | null
  /** Push order among equal due times and priorities (SPEC §4): the first pushed runs first. */
  readonly seq: number
  readonly createdAt: number
  readonly updatedAt: number
  readonly finishedAt: number | null
  /** The last failure, rendered. */
  readonly lastError: string | null
  /**
   * Why it is `paused`; while `running`, a pause asked for during the run (applied when it
   * ends). `null` otherwise.
   */
  readonly pausedReason: Task.PauseReason | null
  /**
   * Set when a held retry of a grid task was resumed: the grid slots before it were recorded as
   * skipped, so the slot after the retry is the first grid slot at or after it. Epoch ms, or -1.
   */
  readonly resumeFrom: number
  /** Its tags (SPEC §15), duplicates dropped, in the order given. */
  readonly tags: ReadonlyArray<string>
  /** Its own catch-up window, ms; `null`: the layer's `catchUpWindow` applies. */
  readonly windowMs: number | null
  /** The key of its circuit breaker's row (see {@link BreakerRow.key}); `null`: none. */
  readonly breaker: string | null
  /**
   * A schedule change waiting for the slot in progress (a run, a pending retry) to end: the new
   * schedule, in whole ms, started as if scheduled when that slot ends. `undefined`: none.
   */
  readonly restart: Schedule.Schedule | undefined
  /** Raised by every update: a completion decided on an older revision is decided again. */
  readonly revision: number
  /**
   * The pending run a trigger set aside (SPEC §19.1), put back when the manual run ends;
   * `undefined` when no manual run is pending or running. While it is set, {@link slot},
   * {@link runAt} and {@link attempt} are the manual run's.
   */
  readonly kept?: KeptRun | undefined
  /** Its flow-control group and key (SPEC §20); `undefined`: none. */
  readonly group?: string | undefined
  readonly key?: string | undefined
  /** Why its due run waits on a limit, as the last claim that passed it over recorded. */
  readonly waiting?: Task.WaitInfo | undefined
  /**
   * Its deduplication key (SPEC §20.3) as accepted (`windowMs` 0 but for `throttle`), or
   * `undefined` for a task without one (and every row written before the key was stored).
   */
  readonly dedup?: Rules.ResolvedDedup | undefined
}

/**
 * A pending run set aside by a trigger (SPEC §19.1): core's `Rules.PendingRun` (slot, due time,
 * attempt) with the row's fields that go back with it, stored as JSON in `tickwork_tasks.kept`.
 *
 * @category models
 * @since 0.5.0
 */
export interface KeptRun {
  readonly slot: number
  /** When the kept attempt is due, epoch ms (the row's `runAt`). */
  readonly dueAt: number
  readonly attempt: number
  /** Its claims so far (see {@link TaskRow.deliveries}). */
  readonly deliveries: number
  /** Its push order (see {@link TaskRow.seq}): it keeps its turn among equal due times. */
  readonly seq: number
  /** See {@link TaskRow.resumeFrom}. */
  readonly resumeFrom: number
}

/**
 * A task's definition as {@link TaskStoreShape.modify} rewrites it (an update, SPEC §15).
 *
 * @category models
 * @since 0.3.0
 */
export interface Definition {
  readonly payload: string
  readonly schedule: Schedule.Encoded
  readonly priority: number
  readonly retry: Retry.Resolved
  readonly missedRuns: MissedRun.MissedRunPolicy
  readonly pauseAfter: number
  readonly timeoutMs: number
  readonly tags: ReadonlyArray<string>
  readonly windowMs: number | null
  readonly breaker: string | null
  readonly restart: Schedule.Schedule | undefined
}

/**
 * One circuit breaker as stored (SPEC §7): shared by name, or a task's own.
 *
 * @category models
 * @since 0.3.0
 */
export interface BreakerRow {
  /** `"shared:<name>"` for a breaker defined on the layer, `"task:<id>"` for a task's own. */
  readonly key: string
  /** A shared breaker's name, or the id of the task that owns it. */
  readonly name: string
  readonly shared: boolean
  readonly policy: Breaker.Resolved
  readonly state: Breaker.BreakerState
  /** Failed slots in a row, counted while closed. */
  readonly failures: number
  /** Times it opened since it last closed. */
  readonly opens: number
  /** When it last opened, epoch ms. */
  readonly openedAt: number | null
  /** When an open breaker goes half-open, epoch ms; `null` otherwise. */
  readonly halfOpenAt: number | null
  /** The half-open breaker's probe: a task id and its generation. */
  readonly probe: string | null
  readonly probeGeneration: number | null
}

/**
 * A task to insert, validated.
 *
 * @category models
 * @since 0.1.0
 */
export interface NewTask
  extends Pick<
    TaskRow,
    | "id"
    | "handler"
    | "payload"
    | "schedule"
    | "priority"
    | "retry"
    | "missedRuns"
    | "pauseAfter"
    | "timeoutMs"
    | "seq"
  > {
  /** Its tags; none when absent. */
  readonly tags?: ReadonlyArray<string> | undefined
  /** Its own catch-up window, ms; absent or `null`: the layer's. */
  readonly windowMs?: number | null | undefined
  /** The first slot. */
  readonly slot: number
  readonly now: number
  /** Its flow-control group and key (SPEC §20), checked against the layer's `limits`. */
  readonly group?: string | undefined
  readonly key?: string | undefined
  /** Its circuit breaker: a shared one (defined on the layer) or its own policy. */
  readonly breaker?:
    | { readonly key: string; readonly name: string; readonly policy: Breaker.Resolved }
    | undefined
  /** Its deduplication key (SPEC §20.3); none when absent. */
  readonly dedup?: Rules.ResolvedDedup | undefined
}

/**
 * The new values of a claimed row.
 *
 * @category models
 * @since 0.1.0
 */
export interface RowUpdate {
  readonly state: Task.TaskState
  readonly slot: number
  readonly runAt: number
  /** See {@link TaskRow.claimableAt}. */
  readonly claimableAt: number
  readonly attempt: number
  readonly runNumber: number
  readonly consecutiveFailures: number
  readonly deliveries: number
  readonly leaseOwner: string | null
  readonly finishedAt: number | null
  readonly lastError: string | null
  readonly seq: number
  readonly updatedAt: number
  /** Why the row is `paused`; `null` (or absent) in any other state. */
  readonly pausedReason?: Task.PauseReason | null | undefined
  /** See {@link TaskRow.resumeFrom}; -1 (or absent) when unset. */
  readonly resumeFrom?: number | undefined
  /**
   * The schedule from now on, when a waiting schedule change ({@link TaskRow.restart}) took
   * effect; it also clears the change. Absent: unchanged.
   */
  readonly schedule?: Schedule.Encoded | undefined
  /** A new definition (an update): written with a raised {@link TaskRow.revision}. */
  readonly define?: Definition | undefined
  /**
   * The run a trigger set aside ({@link TaskRow.kept}): a value stores it, `null` clears it (the
   * manual run ended or was dropped). Absent: unchanged.
   */
  readonly kept?: KeptRun | null | undefined
}

/**
 * One row of the run ledger: a run whose completion committed.
 *
 * @category models
 * @since 0.1.0
 */
export interface RunEntry {
  readonly taskId: string
  readonly generation: number
  readonly slot: number
  readonly attempt: number
  /** When this attempt was due (`scheduledFor`). */
  readonly runAt: number
  readonly startedAt: number
  readonly finishedAt: number
  readonly outcome: Task.Outcome["kind"]
  /** The failure, rendered, for any outcome but `succeeded`. */
  readonly error: string | null
  readonly fence: number
  readonly owner: string
  readonly delivery: number
  /** The task's state after the run. */
  readonly state: Task.TaskState
  /** Where the task went next: a retry's time or the next slot; `null` when final. */
  readonly nextRunAt: number | null
  /**
   * The run's value as JSON text, encoded by its handler's `result` schema and at most the
   * layer's `maxResultBytes` (SPEC §19.3); `null` when none is kept. Absent on rows read from a
   * store before migration 0006.
   */
  readonly result?: string | null | undefined
  /**
   * Why the run's value was not kept (`ResultTooLarge: …`, `ResultEncodeError: …`), or `null`.
   * The run's outcome is unchanged by it.
   */
  readonly resultError?: string | null | undefined
  /**
   * `true` for a manual run (SPEC §19.1: a trigger's, or a slot retry's, §19.7): it was not
   * scheduled, so it has no lateness (core's `Task.countedLateness`). `false` on rows written
   * before migration 0008, which did not record it.
   */
  readonly manual?: boolean | undefined
}

/**
 * Kinds of ledger event.
 * - `skipped`: grid slots dropped (missed-run policy `skip`, or older than the catch-up window);
 * - `coalesced`: grid slots merged into one run (policy `coalesce`);
 * - `fenced-out`: a completion rejected because the lease had passed to another delivery;
 * - `cancelled`: the task was cancelled;
 * - `recovered`: a run cut off by a crash, made due again when the store was reopened;
 * - `released`: a claimed run handed back unfinished by a closing scheduler;
 * - `paused`, `resumed`: the task was paused (by hand, its failure policy or its breaker) or
 *   resumed;
 * - `expired`: a one-shot taken past its deadline (its slot + its own window): it did not run
 *   and the task ended `failed`;
 * - `manual-retry`: a failed task retried by hand (SPEC §19.2), due at once (`detail` gives the
 *   attempt);
 * - `manual-trigger`: a scheduled task triggered by hand (SPEC §19.1): a manual run due at once,
 *   its pending run set aside (`detail` gives the kept slot and due time);
 * - `breaker`: a circuit breaker changed state (`cause` is the new state, {@link
 *   EventEntry.breaker} its name; the task is the one whose slot moved it, or the probe).
 *
 * @category models
 * @since 0.1.0
 */
export type EventKind =
  | "skipped"
  | "coalesced"
  | "fenced-out"
  | "cancelled"
  | "recovered"
  | "released"
  | "paused"
  | "resumed"
  | "expired"
  | "breaker"
  /** A declared task changed in place by `ensure` (SPEC §18); `detail` names the fields. */
  | "updated"
  | "manual-retry"
  | "manual-trigger"
  /**
   * A schedule under the task's deduplication key (SPEC §20.3) created nothing: `cause` is
   * `deduplicated` (the task was returned) or `replaced` (debounce: the task took it in place);
   * `detail` names the key and the request's mode.
   */
  | "deduplicated"

/**
 * One ledger event.
 *
 * @category models
 * @since 0.1.0
 */
export interface EventEntry {
  readonly taskId: string
  readonly generation: number
  readonly kind: EventKind
  /** The slots concerned, `firstSlot`…`lastSlot`, `count` of them (one slot for a run). */
  readonly firstSlot: number
  readonly lastSlot: number
  readonly count: number
  /**
   * Why: `late` / `overlap` / `late-and-overlap` (as the runtime's ledger says), `window`
   * (older than the catch-up window), or the state a cancel came from.
   */
  readonly cause: string | null
  readonly at: number
  readonly fence: number | null
  readonly owner: string | null
  /** Free text: the attempt and outcome of a fenced-out run, … */
  readonly detail: string | null
  /** A `breaker` event's breaker (a shared breaker's name, or the owning task's id). */
  readonly breaker?: string | null | undefined
  /**
   * Who asked for a `paused`, `resumed` or `cancelled` event by hand through a tool that names
   * itself (`StoreAdmin`'s controls with an `origin`: the CLI records `cli`, the dashboard
   * `dashboard`). Absent for every other event, and for the scheduler API's own controls.
   *
   * @since 0.4.0
   */
  readonly origin?: string | undefined
}

/**
 * A decision about a row: its update, the run ledger row when a run ended, its events, and what
 * a circuit breaker counts (the slot ended; it failed).
 *
 * @category models
 * @since 0.3.0
 */
export interface Decided {
  readonly update: RowUpdate
  readonly run?: RunEntry | undefined
  /** Where a run's task went (SPEC §6.7): a `retry` counts in `tickwork_retries_total`. */
  readonly continuation?: Task.Continuation | undefined
  readonly events: ReadonlyArray<EventEntry>
  readonly slot?: { readonly ended: boolean; readonly failed: boolean } | undefined
  /**
   * The task ended without a slot its breaker counts (a one-shot expired): it leaves its
   * breaker, and a half-open breaker whose probe it was lets another held task through.
   */
  readonly leaves?: boolean | undefined
}

/**
 * A change to a claimed row, applied only while the row is still `running` under `fence`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Change {
  readonly id: string
  readonly fence: number
  readonly update: RowUpdate
  /** The revision of the row the change was decided on (see {@link TaskRow.revision}). */
  readonly revision?: number | undefined
  /**
   * What the decision was made from, to make it again on the row as it is in the transaction
   * when it changed while it ran (a pause asked for, an update) or it has a circuit breaker:
   * the commit decides again itself (`settle.ts`), reading the breaker's stored state, and the
   * breaker then counts the slot in that transaction. Data, not a callback: the commit never
   * calls back into the code that prepared the change.
   */
  readonly again?: Redecision | undefined
  /**
   * The same as {@link again}, as a callback: kept for the claim-time expiry, which still
   * builds its change this way. `again` wins when both are given.
   */
  readonly redecide?:
    | ((fresh: TaskRow, breakerOpens: (() => boolean) | undefined) => Decided)
    | undefined
  /** The run ledger row, when a run ended. */
  readonly run?: RunEntry | undefined
  readonly events: ReadonlyArray<EventEntry>
  /** Recorded instead of everything above when the fence no longer matches. */
  readonly fencedOut: EventEntry
}

/**
 * What became of a {@link Change}: `applied`; `held` (applied as {@link Change.again}
 * decided: a pause was asked for while it ran); `cancelled` (the task was cancelled while it ran:
 * the run is recorded, the task stays cancelled); `fenced-out` (another delivery holds the row).
 *
 * @category models
 * @since 0.1.0
 */
export type ChangeResult = "applied" | "held" | "cancelled" | "fenced-out"

/**
 * What a commit did: each change's result and the decision applied (the change's own, or the
 * one {@link Change.again} made), and the events of circuit breakers it moved (transitions,
 * tasks held or released), to publish.
 *
 * @category models
 * @since 0.3.0
 */
export interface Committed {
  readonly results: ReadonlyArray<ChangeResult>
  readonly decided: ReadonlyArray<Decided>
  readonly events: ReadonlyArray<EventEntry>
}

/**
 * What a cancel found.
 *
 * @category models
 * @since 0.1.0
 */
export interface Cancelled {
  readonly generation: number
  readonly from: "scheduled" | "running" | "paused"
  readonly slot: number
  readonly fence: number
  readonly leaseOwner: string | null
}

/**
 * Tasks by state.
 *
 * @category models
 * @since 0.1.0
 */
export type Counts = Readonly<Record<Task.TaskState, number>>

/**
 * What to claim.
 *
 * @category models
 * @since 0.1.0
 */
export interface ClaimOptions {
  readonly owner: string
  readonly now: number
  readonly limit: number
  readonly leaseMs: number
  /** Only tasks of these handlers (the ones this process can run). */
  readonly handlers: ReadonlyArray<string>
  /**
   * Claim only while `owner`'s liveness lock is held (see {@link TaskStoreShape.session}): a
   * process whose session has just ended claims nothing the others would take over at once.
   * PostgreSQL only; ignored by SQLite.
   */
  readonly whileSessionHeld?: boolean | undefined
  /**
   * Flow control (SPEC §20): a due row starts only when every scope it is in has room, as
   * core's `Rules.admit` decides over the scope's running rows and recent starts; the others
   * stay due, their wait recorded on the row. Absent or with no limit: every due row is claimed.
   */
  readonly limits?: Rules.ResolvedLimits | undefined
}

/**
 * A claim taken over from a process whose database session ended: made due at once.
 *
 * @category models
 * @since 0.1.0
 */
export interface TakenOver {
  readonly id: string
  readonly generation: number
  readonly slot: number
  readonly attempt: number
  readonly fence: number
  /** The owner whose session ended. */
  readonly owner: string
  readonly delivery: number
}

/**
 * A process's liveness on a shared store (PostgreSQL): a dedicated session holding the
 * process's lock, which the database releases when the session ends. See
 * {@link TaskStoreShape.session}.
 *
 * @category models
 * @since 0.1.0
 */
export interface Session {
  /**
   * Other processes' notices that work is due soon (`LISTEN` on the same session). The queue
   * fails when the session is lost.
   */
  readonly notices: Queue.Dequeue<unknown, unknown>
  /** A round trip on the session: fails (or does not end) when it is lost. */
  readonly ping: Effect.Effect<void, StoreError>
}

/**
 * When the dispatcher must look again: the earliest due time of the claimable rows it asked
 * about, and the earliest half-open time of an open breaker (epoch ms; `undefined`: none).
 *
 * @category models
 * @since 0.4.0
 */
export interface NextTimes {
  readonly due: number | undefined
  readonly halfOpen: number | undefined
}

/**
 * A {@link TaskStoreShape.modify} decision that changes a row: its update, its events, and the
 * breakers it leaves and joins (row keys; an own breaker to create first).
 *
 * @category models
 * @since 0.3.0
 */
export interface Modification {
  readonly update: RowUpdate
  readonly events: ReadonlyArray<EventEntry>
  readonly breaker?:
    | {
        readonly leave: string | null
        readonly join: string | null
        readonly own?:
          | { readonly key: string; readonly name: string; readonly policy: Breaker.Resolved }
          | undefined
        /**
         * The task stays in this breaker but can no longer be its probe (it was paused by hand):
         * a half-open breaker lets another held task through.
         */
        readonly unprobe?: string | undefined
      }
    | undefined
}

/**
 * A {@link TaskStoreShape.modify} decision that rejects the change with a typed error.
 *
 * @category models
 * @since 0.3.0
 */
export interface Rejected<E> {
  readonly rejected: E
}

/**
 * Which tasks {@link TaskStoreShape.list} reads.
 *
 * @category models
 * @since 0.3.0
 */
export interface Query {
  readonly state?: Task.TaskState | undefined
  readonly tag?: string | undefined
  readonly kind?: Task.TaskInfo["kind"] | undefined
  readonly handler?: string | undefined
  /** Only ids greater than this one (the last id of the previous page). */
  readonly after?: string | undefined
  readonly limit: number
}

/**
 * A breaker with its live tasks, as {@link TaskStoreShape.breakers} reads it.
 *
 * @category models
 * @since 0.3.0
 */
export interface BreakerView {
  readonly breaker: BreakerRow
  /** Its live tasks, by id. */
  readonly tasks: ReadonlyArray<string>
  /** Those it holds (`paused`, reason `breaker`). */
  readonly held: ReadonlyArray<string>
}

/**
 * What a commit needs besides its changes: the push order (SPEC §4) for tasks a breaker lets go,
 * and the owner recorded on the events it writes (`null`: none).
 *
 * @category models
 * @since 0.3.0
 */
export interface CommitContext {
  readonly seq: () => number
  readonly owner: string | null
  /**
   * Retry jitter for a run decided again ({@link Change.again}) that draws more than its first
   * decision recorded; absent: such a draw takes the middle of the jitter range (0.5).
   */
  readonly random?: Random.Random | undefined
}

/**
 * The inputs of a finished run's decision (`Rules.settle` and its ledger row), kept as data on
 * its {@link Change} so that the commit can make the same decision again on the row as it is in
 * the transaction: the outcome and its times, the run's number, the push order `seq` if it is
 * due again, the layer's catch-up window (ms, +Infinity: none), the owner recorded, and the
 * jitter draws the first decision made (replayed first, so both decide alike).
 *
 * @category models
 * @since 0.4.0
 */
export interface Redecision {
  readonly outcome: Task.Outcome
  readonly startedAt: number
  readonly finishedAt: number
  readonly runNumber: number
  readonly seq: number
  readonly windowMs: number
  readonly owner: string
  readonly draws: ReadonlyArray<number>
}
