/**
 * The kernel: the scheduler's whole state and rules, with no I/O, no timers and no Effect
 * runtime. Every operation is a short synchronous step that takes `now` as a parameter; drivers
 * (the deterministic {@link Driver} and the Effect runtime's timing actor) own the clock and run
 * the jobs.
 *
 * Tasks live in a table of typed arrays indexed by a task index; the {@link TimerHeap} holds
 * only `(slot, order, index)` keys. A task advances through the compiled
 * {@link Lifecycle} table. Rarely used per-task data (a caller's id, a recurring plan, a retry
 * policy, the last failure) sits in one optional side object, so a pending one-shot task with a
 * generated id costs ~63 bytes besides the job itself (row 32, heap entry 20, job reference 8, and
 * the slack of doubling arrays).
 *
 * Ground rules (SPEC §14):
 * 1. A run is taken only when its slot is `<= now`, in (slot, priority, seq) order.
 * 2. Every accepted task is in exactly one state; the per-state counts sum to
 *    `accepted - removed` (removed = dropped by retention or replaced by a reused id).
 * 3. A cancelled task never starts again: its heap entry is dead and dropped when it surfaces.
 * 4. A recurring task is pushed again only when its run completes, so it never overlaps itself.
 * 5. Live heap entries are exactly the `scheduled` tasks, one each; `deadEntries` counts the rest.
 * 6. No randomness or time but the injected {@link Random} and the `now` arguments.
 * 7. A `paused` task has no live heap entry and starts no run; it keeps its job and its pending
 *    slot or retry, so a held one-shot or retry is never lost (SPEC §15, §7).
 * 8. A circuit breaker's tasks are held while it is open: none of them is `scheduled`, except
 *    the half-open breaker's one probe and tasks resumed by hand.
 *
 * @since 0.1.0
 */
import type * as Declared from "./Declared.ts"
import { InvalidOption, type ManualRunRefused, type ScheduleError } from "./Errors.ts"
import { acceptRow, reusableRow } from "./internal/accept.ts"
import { Breakers } from "./internal/breakers.ts"
import { badId, DedupKeys } from "./internal/dedup.ts"
import { explainRow } from "./internal/explain.ts"
import { cancelRow, finishRow } from "./internal/finish.ts"
import { checkInvariants } from "./internal/invariants.ts"
import { breakersOf, retentionOf } from "./internal/kernelOptions.ts"
import type {
  BreakerInfo,
  Explanation,
  KernelOptions,
  Scheduled,
  SlotToRetry,
  Stats,
  TaskFilter,
  TaskOptions,
  UpdateOptions,
} from "./internal/kernelTypes.ts"
import { taskOptionKeys } from "./internal/kernelTypes.ts"
import { Flow, type ScopeCell } from "./internal/limits.ts"
import { dropManual, endManual, retrySlot, retryTask, triggerRow } from "./internal/manual.ts"
import { hold, pauseRow, resumeRow, resumeTask } from "./internal/pause.ts"
import { breakerOf, definitionOf, infoOf, statsOf, taskIdsOf } from "./internal/queries.ts"
import { Extras, NO_TAGS } from "./internal/records.ts"
import { Rows } from "./internal/rows.ts"
import { Run } from "./internal/run.ts"
import { shiftKernel } from "./internal/shift.ts"
import { WALL_SLOT, WALL_TASK } from "./internal/table.ts"
import { movedAtTake } from "./internal/take.ts"
import { updateTask } from "./internal/update.ts"
import * as Lifecycle from "./Lifecycle.ts"
import type { Dropped } from "./MissedRun.ts"
import * as Random from "./Random.ts"
import * as Rules from "./Rules.ts"
import type {
  Occurrence,
  Outcome,
  PauseReason,
  RunRecord,
  TaskId,
  TaskInfo,
  TaskState,
} from "./Task.ts"

export type {
  BreakerInfo,
  Explanation,
  KernelOptions,
  Retention,
  Scheduled,
  SlotToRetry,
  Stats,
  TaskFilter,
  TaskOptions,
  UpdateOptions,
} from "./internal/kernelTypes.ts"
export { taskOptionKeys, updateKeys } from "./internal/kernelTypes.ts"
export { formatId, Run } from "./internal/run.ts"

const { SCHEDULED, RUNNING, PAUSED, FAILED, START } = Lifecycle
const NO_WINDOW = Rules.NO_WINDOW

/**
 * The scheduling kernel. Not thread-safe by design: exactly one owner calls it, in short
 * synchronous steps; jobs run outside those steps and may call back in (SPEC §10).
 *
 * **Example** (Accept, take, complete)
 *
 * ```ts
 * import { Kernel, Schedule, Task } from "@tickwork/core"
 * const k = new Kernel.Kernel<string>()
 * const id = k.schedule({ job: "hello", schedule: Schedule.once(10) }, 0) as Task.TaskId
 * k.takeDue(9)               // undefined: not due yet
 * const run = k.takeDue(10)! // run.job === "hello", run.startedAt === 10
 * k.complete(run, Task.succeeded, 10, true)?.state // "done"
 * k.status(id)               // "done"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export class Kernel<J> {
  /** The task table, heap, ids, counts and retention; see internal/rows. */
  private readonly rows: Rows<J>
  /** The circuit breakers (SPEC §7); see internal/breakers. */
  private readonly circuits: Breakers<J>
  /** Flow control (SPEC §20): the limits, and their cells when any is declared. */
  private readonly limits: Rules.ResolvedLimits
  private readonly flow: Flow<J> | undefined
  private readonly keys: DedupKeys<J> // SPEC §20.3, and what the last schedule did:
  // Stryker disable next-line StringLiteral: equivalent, `schedule` writes it before any read
  private outcome: Scheduled["outcome"] = "created"

  private readonly random: Random.Random

  /** The row whose run is being settled, for {@link opens}. */
  private settling = 0
  /** Whether the settling row's breaker opens on its failed slot (the rules ask at most once). */
  private readonly opens = (): boolean => this.circuits.opensOnFailure(this.settling)
  /** Working memory of the rules' settle, reused by every completion. */
  private readonly scratch = Rules.makeScratch()
  private readonly settleContext: Rules.SettleContext
  private readonly settleWithBreaker: Rules.SettleContext

  constructor(options: KernelOptions = {}) {
    const retention = retentionOf(options)
    if (retention instanceof InvalidOption) throw retention
    const breakers = breakersOf(options)
    if (breakers instanceof InvalidOption) throw breakers
    const limits = Rules.resolveLimits(options.limits)
    if (limits instanceof InvalidOption) throw limits
    this.rows = new Rows<J>(retention.maxFinished, retention.maxAgeMs)
    this.limits = limits
    const limited = limits.groups.size > 0 || limits.keys !== undefined
    this.flow = limited ? new Flow(this.rows, limits) : undefined
    this.circuits = new Breakers(this.rows, {
      pause: (i, reason, now) => this.pauseAt(i, reason, now),
      resume: (i, now) => resumeRow(this.rows, i, now),
    })
    this.keys = new DedupKeys(this.rows, this.circuits)
    this.random = options.random ?? Random.seeded(0)
    this.settleContext = { random: this.random }
    this.settleWithBreaker = { random: this.random, breakerOpens: this.opens }
    for (const [name, resolved] of breakers) this.circuits.define(name, resolved)
  }

  // ------------------------------------------------------------------ accept

  /**
   * Validates and accepts a task at `now`, returning its id, or the typed error of the first bad
   * option (and then nothing has changed). With `dedup` (SPEC §20.3) the id is the task that
   * holds the key, which may be an earlier task; {@link scheduleDeduplicated} says which. O(log n).
   */
  schedule(options: TaskOptions<J>, now: number): TaskId | ScheduleError {
    const accepted = Rules.validate(options, now, taskOptionKeys)
    if (!("first" in accepted)) return accepted
    const breaker =
      options.breaker === undefined ? undefined : this.circuits.resolve(options.breaker)
    if (breaker instanceof InvalidOption) return breaker
    const scopes = Rules.scopesOf(options.group, options.key, this.limits)
    if (scopes instanceof InvalidOption) return scopes
    const bad = badId(options.id)
    if (bad !== undefined) return bad
    const dedup = options.dedup === undefined ? undefined : Rules.resolveDedup(options.dedup)
    if (dedup instanceof InvalidOption) return dedup
    const done = dedup === undefined ? undefined : this.keys.request(dedup, options, now)
    this.outcome = done === undefined || !("outcome" in done) ? "created" : done.outcome
    if (done !== undefined) return "outcome" in done ? done.id : done
    const replaced = reusableRow(this.rows, options.id)
    if (typeof replaced !== "number") return replaced
    const c = this.circuits
    const id = acceptRow(this.rows, c, options, accepted, breaker, replaced, now, scopes, dedup)
    if (dedup !== undefined) this.keys.created(dedup, id, now)
    return id
  }

  /**
   * {@link schedule}, saying whether the `dedup` key's holder (SPEC §20.3) was `created`, the
   * request `deduplicated` into it, or it was `replaced` by the request (debounce). O(log n).
   */
  scheduleDeduplicated(options: TaskOptions<J>, now: number): Scheduled | ScheduleError {
    const id = this.schedule(options, now)
    return typeof id === "string" ? { id, outcome: this.outcome } : id
  }

  // ------------------------------------------------------------------ cancel and query

  /**
   * Cancels a `scheduled`, `running` or `paused` task: true when it was one of those, false for
   * an unknown or final task. A running task's run is not stopped here (its outcome is still reported by
   * {@link complete}), but it is never rescheduled. O(1) amortised: the heap entry dies in place
   * and the heap is compacted when dead entries pass half of it.
   */
  cancel(id: string, now: number): boolean {
    const i = this.rows.lookup(id)
    return i >= 0 && this.leaving(i, now, cancelRow(this.rows, this.circuits, i, now))
  }

  /** The task's state, or `"unknown"` for an id never seen or dropped by retention. O(1). */
  status(id: string): TaskState | "unknown" {
    const i = this.rows.lookup(id)
    return i < 0 ? "unknown" : (Lifecycle.states[this.rows.t.state(i)] as TaskState)
  }

  /** Everything known about a task, or `undefined` for an unknown id. O(1). */
  info(id: string): TaskInfo | undefined {
    const i = this.rows.lookup(id)
    return i < 0 ? undefined : infoOf(this.rows, i)
  }

  /**
   * A task's definition as `Declared.decide` compares it (SPEC §18), with its job as
   * `more.job`, or `undefined` for an unknown id. A schedule change waiting for the slot in
   * progress to end is its schedule here. O(1) but for that change's schedule (resolved at `now`).
   */
  definition(id: string, now: number): Declared.Current | undefined {
    const i = this.rows.lookup(id)
    return i < 0 ? undefined : definitionOf(this.rows, i, now)
  }

  /** The job of a live or retained task, or `undefined` for an unknown id. O(1). */
  jobOf(id: string): J | undefined {
    const i = this.rows.lookup(id)
    return i < 0 ? undefined : this.rows.t.job(i)
  }

  /**
   * The table row of a live or retained task, or -1. Side tables indexed like the kernel's own
   * (as `Run.index`) use it; a row is reused after its task is dropped, so pair it with the
   * task's generation. O(1).
   */
  rowOf(id: string): number {
    return this.rows.lookup(id)
  }

  /** Ids of every task the kernel knows (live and retained final ones), in table order. O(n). */
  taskIds(): Array<TaskId> {
    return taskIdsOf(this.rows)
  }

  // ------------------------------------------------------------------ controls (SPEC §15)

  /**
   * Pauses a task (SPEC §5, §15): a `scheduled` task becomes `paused` at once (its heap entry
   * dies); a `running` one finishes its run, reports, then becomes `paused`. True when it was
   * one of those; false for a task already paused (or already going to pause), final or unknown.
   * A task held by its breaker or failure policy that is paused by hand stays paused until
   * {@link resume}. O(1) amortised.
   */
  pause(id: string, now: number): boolean {
    const i = this.rows.lookup(id)
    return i >= 0 && this.pauseAt(i, "manual", now)
  }

  /**
   * Runs a `scheduled` task once now, outside its schedule (SPEC §19.1): its pending run (next
   * slot, or pending retry) is set aside and a manual run is pushed, due at `now` (taken in the
   * usual order, §4). When the manual run ends — whatever its outcome — the pending run is put
   * back as it was: no slot is moved, skipped or added, no retry is spent, and neither the
   * failure policy nor the breaker counts it. A pause asked for while it runs takes effect then.
   * A pause, or a new schedule, before it starts drops it.
   *
   * Refused (`ManualRunRefused` naming the id and its state; nothing changes) for a task that is
   * running (no overlap, §6.6), paused, final, unknown, or that already has a manual run
   * waiting. O(log n).
   */
  trigger(id: string, now: number): true | ManualRunRefused {
    const i = this.rows.lookup(id)
    const state = i < 0 ? "unknown" : (Lifecycle.states[this.rows.t.state(i)] as TaskState)
    const pending = i >= 0 && this.rows.t.extra(i)?.manual !== undefined
    const refused = Rules.manualRefusal("trigger", id, state, pending)
    if (refused !== undefined) return refused
    triggerRow(this.rows, i, now)
    return true
  }

  /**
   * Gives a `failed` task one more attempt (SPEC §19.2): it is `scheduled` again, due at `now`,
   * its failed slot's next attempt (same slot, attempt + 1), with no automatic retry after it:
   * if that attempt fails too, the task is `failed` again. Its id, generation, run count and
   * failure stay; a catch-up window or deadline does not stop it. A task with a shared breaker
   * rejoins it as it is (§7.8); its own breaker starts afresh.
   *
   * Refused (`ManualRunRefused`; nothing changes) for any task that is not `failed`. O(log n).
   *
   * Given `slot` (SPEC §19.7): that failed slot of a recurring task, as a manual run (`runs`:
   * what the caller's ledger holds of it; the kernel keeps none), or `Rules.manualRefusal`'s no.
   */
  retry(id: string, now: number, slot?: SlotToRetry): true | ManualRunRefused {
    const i = this.rows.lookup(id)
    const state = i < 0 ? "unknown" : (Lifecycle.states[this.rows.t.state(i)] as TaskState)
    if (slot !== undefined) return retrySlot(this.rows, i, id, state, slot, now)
    const refused = Rules.manualRefusal("retry", id, state)
    if (refused !== undefined) return refused
    retryTask(this.rows, this.circuits, i, now)
    return true
  }

  /**
   * Resumes a `paused` task (SPEC §15), whatever paused it, or withdraws a pause requested while
   * it runs. The slots that passed while it was paused are recorded once per contiguous range as
   * skipped (cause `paused`, or `breaker`) and never caught up; it continues with a one-shot's or
   * held retry's own slot (due at once if passed), the first grid slot or cron match `>= now`, or
   * for fixed delay (and custom) `max(held slot, now)`. False for any other task. O(log n).
   */
  resume(id: string, now: number): boolean {
    const i = this.rows.lookup(id)
    return i >= 0 && resumeTask(this.rows, i, now)
  }

  /**
   * Changes a live (`scheduled`, `running` or `paused`) task in place (SPEC §15): its id,
   * generation, run count and history stay. A new schedule's first slot is computed as if the task
   * were scheduled at `now`; a running task (or one with a retry pending) finishes its slot first
   * and starts the new schedule when that slot ends, as if scheduled then. Returns true when the
   * task was changed, false for an unknown or final id, and the typed error of the first bad
   * change otherwise (then nothing has changed). O(log n).
   */
  update(id: string, changes: UpdateOptions<J>, now: number): boolean | ScheduleError {
    return updateTask(this.rows, this.circuits, id, changes, now)
  }

  /**
   * The tasks matching `filter` (every given field), live and retained, in table order. O(n).
   *
   * **Example** (Paused tasks tagged "billing")
   *
   * ```ts
   * import { Kernel, Schedule } from "@tickwork/core"
   * const k = new Kernel.Kernel<string>()
   * const id = k.schedule({ job: "a", schedule: Schedule.fixedRate(10), tags: ["billing"] }, 0) as string
   * k.pause(id, 0)
   * k.tasks({ state: "paused", tag: "billing" }).map((t) => t.id) // [id]
   * ```
   */
  tasks(filter: TaskFilter = {}): Array<TaskInfo> {
    const out: Array<TaskInfo> = []
    this.rows.forEachMatch(filter, (i) => {
      out.push(infoOf(this.rows, i))
    })
    return out
  }

  /** Pauses every task matching `filter` (see {@link pause}); returns the ids it paused. O(n). */
  pauseAll(filter: TaskFilter, now: number): Array<TaskId> {
    return this.changeAll(filter, (i) => this.pauseAt(i, "manual", now))
  }

  /** Resumes every task matching `filter` (see {@link resume}); returns the ids it resumed. O(n). */
  resumeAll(filter: TaskFilter, now: number): Array<TaskId> {
    return this.changeAll(filter, (i) => this.resume(this.rows.idOf(i), now))
  }

  /** Cancels every task matching `filter` (see {@link cancel}); returns the ids it cancelled. O(n). */
  cancelAll(filter: TaskFilter, now: number): Array<TaskId> {
    return this.changeAll(filter, (i) => this.cancel(this.rows.idOf(i), now))
  }

  /**
   * A live task's next `count` slots given its state (SPEC §15): paused, held by a breaker, a
   * retry pending, a window. Pure: changes nothing. `undefined` for an unknown or final id.
   */
  explain(id: string, now: number, count = 5): Explanation | undefined {
    const i = this.rows.lookup(id)
    return i < 0 ? undefined : explainRow(this.rows, this.circuits, this.flow, i, now, count)
  }

  /** Every circuit breaker: the shared ones, then those of live tasks. O(breakers + their tasks). */
  breakers(): Array<BreakerInfo> {
    return [...this.circuits.cells].map((cell) => this.circuits.info(cell))
  }

  /** A shared breaker by name, or a task's own breaker by the task's id; `undefined` if none. */
  breaker(name: string): BreakerInfo | undefined {
    return breakerOf(this.rows, this.circuits, name)
  }

  /** Occurrences waiting to be drained: lets a driver skip {@link drainOccurrences} when 0. O(1). */
  get pendingOccurrenceCount(): number {
    return this.rows.pendingOccurrences.length
  }

  /**
   * The occurrences (skipped slots, expired one-shots, pauses, resumes, breaker transitions)
   * since the last call, in order, and forgets them. A driver calls it after each step, so they
   * are never lost nor kept without bound. O(count).
   */
  drainOccurrences(): Array<Occurrence> {
    const out = this.rows.pendingOccurrences
    if (out.length === 0) return []
    this.rows.pendingOccurrences = []
    return out
  }

  // ------------------------------------------------------------------ run

  /**
   * The earliest pending slot, or `undefined` when nothing is scheduled. Drops dead entries
   * that have surfaced. An open circuit breaker's half-open time counts as a slot: the driver
   * must call {@link takeDue} then, so the breaker lets its probe through. O(1) amortised.
   */
  nextSlot(): number | undefined {
    const heap = this.rows.heap
    while (heap.size > 0) {
      const i = heap.topTask()
      if (this.rows.isLive(i, heap.topOrder())) {
        const slot = heap.topSlot()
        return Math.min(slot, this.circuits.at, this.flow?.at ?? slot)
      }
      heap.pop()
      this.rows.dead--
    }
    const at = Math.min(this.circuits.at, this.flow?.at ?? Number.POSITIVE_INFINITY)
    return at === Number.POSITIVE_INFINITY ? undefined : at
  }

  /**
   * Takes the first run with slot `<= limit` (SPEC §4 order) and moves its task to `running`,
   * started at `max(now, slot)`; `undefined` when none is that early. `limit` defaults to `now`
   * (what is due now); a stepping driver passes its end time and moves its clock to the run's
   * `startedAt`. A late grid slot of a `coalesce` task is first moved to the latest grid slot
   * `<= min(now, limit)` (SPEC §3). O(log n).
   */
  takeDue(now: number, limit: number = now): Run<J> | undefined {
    const heap = this.rows.heap
    const t = this.rows.t
    for (;;) {
      // Many runs due at once (a burst, a driver stepping far ahead) are sorted out of the
      // heap in one batch instead of being popped one by one.
      heap.prepare(limit)
      if (this.circuits.at <= limit && (heap.size === 0 || this.circuits.at <= heap.topSlot())) {
        // A breaker's cool-down ends before the next run: it goes half-open first (SPEC §7).
        this.circuits.halfOpen(Math.max(this.circuits.at, now))
        continue
      }
      const flow = this.flow
      // A rate window opening before the next run lets its waiters go back to the heap (§20.2).
      if (flow?.opened(now, limit, heap)) continue
      if (heap.size === 0) return undefined
      const slot = heap.topSlot()
      if (slot > limit) return undefined
      const i = heap.topTask()
      const order = heap.topOrder()
      // Read the row before popping: the row and its refs are cold (rows are visited in slot
      // order, not in the order they were written), and these loads can then complete while
      // the pop's sift runs, instead of stalling after it.
      const live = t.state(i) === SCHEDULED && t.ticket(i) === order
      const g = t.gen(i)
      const job = t.job(i) as J
      const extra = t.extra(i)
      heap.pop()
      if (!live) {
        this.rows.dead--
        continue
      }
      // A manual run (SPEC §19) is neither skipped by a window nor coalesced.
      const manual = extra?.manual
      if (
        extra !== undefined &&
        manual === undefined &&
        (extra.windowMs !== NO_WINDOW || (slot < now && extra.missedRuns === "coalesce")) &&
        movedAtTake(this.rows, this.circuits, i, g, extra, slot, now, limit)
      ) {
        continue
      }
      // A run whose scope is at its limit waits in the scope's queue, out of the heap (SPEC §20).
      const at = extra === undefined ? slot : Math.max(slot, now, extra.notBefore)
      const cells =
        extra?.scopes === undefined || flow === undefined
          ? undefined
          : flow.admit(i, extra, extra.scopes, slot, order, at)
      if (cells === undefined && extra?.scopes !== undefined) continue
      if (manual === "retry") (extra as Extras).manual = undefined
      const ctx = this.rows.load(i, extra)
      Lifecycle.step(SCHEDULED, START, this.rows.args)
      t.setState(i, RUNNING)
      t.setRuns(i, ctx.runNumber)
      this.rows.counts[SCHEDULED] = (this.rows.counts[SCHEDULED] as number) - 1
      this.rows.counts[RUNNING] = (this.rows.counts[RUNNING] as number) + 1
      this.rows.inFlight++
      let merged: Dropped | undefined
      let startedAt = Math.max(slot, now)
      if (extra !== undefined) {
        if (extra.merged !== undefined) {
          merged = extra.merged
          extra.merged = undefined
        }
        if (extra.notBefore >= 0) {
          if (extra.notBefore > startedAt) startedAt = extra.notBefore
          extra.notBefore = -1
        }
      }
      // While it runs, the ticket field holds when its run started (`runningSince`).
      t.setTicket(i, startedAt)
      const run = new Run(
        i,
        g,
        extra?.id,
        job,
        // A retry keeps the slot it belongs to; its heap slot is its due time.
        (ctx.attempt > 1 || manual === "retry") && extra !== undefined ? extra.gridSlot : slot,
        slot,
        startedAt,
        ctx.attempt,
        ctx.runNumber,
        merged,
        extra === undefined ? NO_TAGS : extra.tags,
        manual === "trigger" || manual === "slot",
      )
      if (cells !== undefined) {
        run.scopes = cells
        ;(flow as Flow<J>).started(cells, startedAt)
      }
      return run
    }
  }

  /**
   * Reports a run's outcome at `finishedAt` and applies the lifecycle: the task is scheduled
   * again (a retry, or its next slot under its missed-run policy) or reaches a final state.
   * A run whose task was cancelled (or whose id was reused) meanwhile changes nothing but is
   * still reported. Returns the {@link RunRecord} when `record` is set: written into `into` when
   * given (valid until the next completion; see {@link Rules.RecordBuffer}), except for the rare
   * run whose task was cancelled meanwhile or that paused its task, which gets one of its own.
   * O(log n).
   */
  complete(
    run: Run<J>,
    outcome: Outcome,
    finishedAt: number,
    record: boolean,
    into?: Rules.RecordBuffer,
  ): RunRecord | undefined {
    const i = run.index
    this.rows.inFlight--
    if (run.scopes !== undefined) this.flow?.ended(run.scopes as Array<ScopeCell>, finishedAt)
    if (this.rows.t.gen(i) !== run.generation || this.rows.t.state(i) !== RUNNING) {
      this.rows.expire(finishedAt)
      if (!record) return undefined
      // Cancelled while running, or since dropped by retention (then it was final: cancelled).
      const kept = this.rows.t.gen(i) === run.generation && this.rows.present(i)
      const state = kept ? (Lifecycle.states[this.rows.t.state(i)] as TaskState) : "cancelled"
      return Rules.finalRecord(run, outcome, finishedAt, state)
    }
    if (run.manual) return endManual(this.rows, run, outcome, finishedAt, record)
    const failed = outcome.kind !== "succeeded"
    let extra = this.rows.t.extra(i)
    this.settling = i
    const settled = Rules.settleInto(
      this.rows.rowView(i, extra),
      outcome,
      finishedAt,
      extra?.breaker === undefined ? this.settleContext : this.settleWithBreaker,
      this.scratch,
    )
    const target = Lifecycle.states.indexOf(settled.state)
    this.rows.t.setState(i, target)
    this.rows.t.setAttempt(i, settled.attempt)
    this.rows.bump(RUNNING, -1)
    this.rows.bump(target, 1)
    if (failed) {
      if (extra === undefined) {
        extra = new Extras()
        this.rows.t.setExtra(i, extra)
      }
      extra.lastFailure = outcome
      if (target === FAILED) extra.failedAttempt = run.attempt
    }
    if (extra !== undefined) {
      extra.consecutiveFailures = settled.consecutiveFailures
      extra.pauseRequest = undefined
      if (settled.consumed) {
        // The schedule's next slot was computed: a waiting schedule change took effect.
        extra.restart = undefined
        extra.resumeFrom = -1
        extra.plan = settled.plan
        if (settled.scheduleError !== undefined) extra.scheduleError = settled.scheduleError
      }
    }
    const nextSlot = settled.nextSlot
    if (settled.continuation === "next") {
      ;(extra as Extras).gridSlot = settled.slot
      const anchor = this.rows.t.anchor(i)
      this.rows.t.setAnchor(i, anchor & WALL_TASK ? anchor | WALL_SLOT : anchor)
    } else if (settled.continuation === "retry") {
      // A retry is due a backoff after the failure: a delay, whatever the task's schedule.
      this.rows.t.setAnchor(i, this.rows.t.anchor(i) & ~WALL_SLOT)
    }
    if (extra !== undefined && extra.breaker !== undefined && settled.slotEnded) {
      // Until its push below, a row going back to `scheduled` still holds its start time as
      // ticket; a compaction set off by the breaker pausing its other tasks must not take an
      // old entry whose order key happens to equal it for live. No order key is negative.
      if (target === SCHEDULED) this.rows.t.setTicket(i, -1)
      this.circuits.afterRun(i, extra.breaker, failed, finishedAt)
    }
    if (target === PAUSED) {
      // Held: the slot or retry is kept, not pushed; resume decides when it runs (SPEC §15).
      this.rows.t.setSlot(i, nextSlot as number)
      hold(this.rows, i, extra as Extras, settled.pausedReason as PauseReason, finishedAt)
    } else if (nextSlot !== undefined) {
      this.rows.t.setSlot(i, nextSlot)
      this.rows.push(i, nextSlot)
    } else {
      finishRow(this.rows, this.circuits, i, finishedAt)
    }
    this.rows.expire(finishedAt)
    if (!record) return undefined
    return into !== undefined && settled.pausedReason === undefined
      ? Rules.recordInto(into, run, outcome, finishedAt, settled)
      : Rules.record(run, outcome, finishedAt, settled)
  }

  /**
   * Re-anchors the kernel's time axis by `delta` ms after the wall clock stepped (SPEC §2): every
   * time that counts from a delay — a `once` or grid slot, a fixed-rate grid, a pending retry,
   * the run a manual run stands in for, and the windows of rate limits, breakers' cool-downs and
   * throttles — moves by `delta`, so it stays as far away as it was; an `at` instant or a cron
   * match stays put, so it keeps its calendar meaning. A driver whose `now` jumped by `delta`
   * with the wall clock calls this once; nothing fires, opens or closes early or late because of
   * the step. O(n).
   */
  shift(delta: number): void {
    shiftKernel(this.rows, { flow: this.flow, breakers: this.circuits, keys: this.keys }, delta)
  }

  // ------------------------------------------------------------------ introspection

  /** Counts by state and heap figures. O(1). */
  stats(): Stats {
    return statsOf(this.rows, this.flow, this.keys)
  }

  /** Tasks in `scheduled` now: `stats().scheduled` without building the stats. O(1). */
  get scheduledCount(): number {
    return this.rows.counts[SCHEDULED] as number
  }

  /**
   * Rows the task table has room for now; it doubles as tasks arrive, and a row index is always
   * below it. A store kept per row beside the kernel (the runtime's ledger) grows with it when
   * tasks are accepted instead of during runs. O(1).
   */
  get rowCapacity(): number {
    return this.rows.t.capacity
  }

  /** Bytes held by the typed arrays of the heap and the task table (jobs and side objects excluded). */
  get arrayBytes(): number {
    return this.rows.heap.byteLength + this.rows.t.byteLength
  }

  /**
   * Checks SPEC §14's structural invariants — heap order, accounting, one live heap entry per
   * scheduled task at its slot, the dead-entry count — and throws {@link InvariantViolation} on
   * the first break. O(n); for tests.
   */
  checkInvariants(): void {
    checkInvariants(this.rows, this.circuits)
  }

  // ------------------------------------------------------------------ controls: internals
  /** PAUSE for row `i`; by hand, a manual run not yet started is dropped first (SPEC §19.1). */
  private pauseAt(i: number, reason: PauseReason, now: number): boolean {
    if (Rules.pauseDropsManual(reason)) dropManual(this.rows, i)
    return this.leaving(i, now, pauseRow(this.rows, this.circuits, i, reason, now))
  }
  /** Row `i` left `scheduled` (`left`): its scopes' queues are asked again (SPEC §20). */
  private leaving(i: number, now: number, left: boolean): boolean {
    const scopes = this.rows.t.extra(i)?.scopes
    if (left && scopes !== undefined && this.flow !== undefined) this.flow.leaving(scopes, now)
    return left
  }
  private changeAll(filter: TaskFilter, change: (i: number) => boolean): Array<TaskId> {
    const rows: Array<number> = []
    this.rows.forEachMatch(filter, (i) => rows.push(i))
    const out: Array<TaskId> = []
    for (const i of rows) {
      // An earlier change (a breaker released by a cancel, say) may have moved this task on.
      const id = this.rows.idOf(i)
      if (change(i)) out.push(id)
    }
    return out
  }
}
