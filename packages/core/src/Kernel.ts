/**
 * The kernel: the scheduler's whole state and rules, with no I/O, no timers and no Effect
 * runtime. Every operation is a short synchronous step that takes `now` as a parameter; drivers
 * (the deterministic {@link Driver} and the Effect runtime's timing actor) own the clock and run
 * the jobs.
 *
 * Tasks live in a table of typed arrays indexed by a task index; the {@link TimerHeap} holds
 * only `(slot, order, index, generation)` keys. A task advances through the compiled
 * {@link Lifecycle} table. Rarely used per-task data (a caller's id, a recurring plan, a retry
 * policy, the last failure) sits in one optional side object, so a pending one-shot task with a
 * generated id costs ~70 bytes besides its job.
 *
 * Ground rules (SPEC §14):
 * 1. A run is taken only when its slot is `<= now`, in (slot, priority, seq) order.
 * 2. Every accepted task is in exactly one state; the per-state counts sum to
 *    `accepted - removed` (removed = dropped by retention or replaced by a reused id).
 * 3. A cancelled task never starts again: its heap entry is dead and dropped when it surfaces.
 * 4. A recurring task is pushed again only when its run completes, so it never overlaps itself.
 * 5. Live heap entries are exactly the `scheduled` tasks, one each; `deadEntries` counts the rest.
 * 6. No randomness or time but the injected {@link Random} and the `now` arguments.
 *
 * @since 0.1.0
 */
import {
  DuplicateTaskId,
  InvalidOption,
  InvalidPriority,
  type InvalidTime,
  InvariantViolation,
  type ScheduleError,
  show,
  unknownKey,
} from "./Errors.ts"
import { RANK_STRIDE, TimerHeap } from "./Heap.ts"
import { FinalRing, HAS_EXTRA, STALE, STATE_MASK } from "./internal/finalRing.ts"
import { Table, WALL_SLOT, WALL_TASK } from "./internal/table.ts"
import * as Lifecycle from "./Lifecycle.ts"
import type { Dropped, MissedRunPolicy, Next } from "./MissedRun.ts"
import * as MissedRun from "./MissedRun.ts"
import * as Random from "./Random.ts"
import * as Retry from "./Retry.ts"
import * as Schedule from "./Schedule.ts"
import type {
  Continuation,
  Outcome,
  Priority,
  RunInfo,
  RunRecord,
  TaskId,
  TaskInfo,
  TaskState,
} from "./Task.ts"
import { type DurationInput, MAX_MS, toMillisWith } from "./Time.ts"

const { SCHEDULED, RUNNING, DONE, FAILED, CANCELLED, START, SUCCEED, FAIL, CANCEL } = Lifecycle
const INITIAL_CAPACITY = 64

/**
 * The keys of {@link TaskOptions}. A driver that adds options of its own (the runtime's
 * `timeout`) extends this set and removes them before calling {@link Kernel.schedule}.
 *
 * @category models
 * @since 0.1.0
 */
export const taskOptionKeys: ReadonlySet<string> = new Set([
  "job",
  "schedule",
  "id",
  "priority",
  "retry",
  "missedRuns",
  "pauseAfterConsecutiveFailures",
])

/**
 * Everything needed to accept a task.
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskOptions<J> {
  /** What to run; opaque to the kernel (a function for the driver, an Effect for the runtime). */
  readonly job: J
  readonly schedule: Schedule.Schedule
  /** A caller-supplied id; generated (`#<index>.<generation>`) when absent. */
  readonly id?: string | undefined
  /** Default `"normal"`. */
  readonly priority?: Priority | undefined
  readonly retry?: Retry.RetryPolicy | undefined
  /** For fixed-rate and cron schedules. Default `"catch-up"`. */
  readonly missedRuns?: MissedRunPolicy | undefined
  /** A recurring task fails for good after this many slots in a row fail (retries used up). */
  readonly pauseAfterConsecutiveFailures?: number | undefined
}

/**
 * How long final tasks stay queryable. A final task is dropped when more than `maxFinished`
 * final tasks are kept (oldest first), or at the first kernel step at or after
 * `finishedAt + maxAge`. Memory for final tasks is therefore bounded by `maxFinished`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Retention {
  /** Default 10,000. */
  readonly maxFinished?: number
  /** How long a final task stays queryable: ms or an Effect `Duration` input. Default: no limit. */
  readonly maxAge?: DurationInput
  /** The same as {@link maxAge}, in ms (kept for existing callers; give one of the two). */
  readonly maxAgeMs?: number
}

const retentionKeys: ReadonlySet<string> = new Set(["maxFinished", "maxAge", "maxAgeMs"])

/**
 * Kernel options.
 *
 * @category models
 * @since 0.1.0
 */
export interface KernelOptions {
  /** Jitter source. Default `Random.seeded(0)`: deterministic unless a seed says otherwise. */
  readonly random?: Random.Random
  readonly retention?: Retention
}

/**
 * Counts of tasks by state and of heap entries. `scheduled + running + done + failed +
 * cancelled === accepted - removed` at all times.
 *
 * @category models
 * @since 0.1.0
 */
export interface Stats {
  readonly scheduled: number
  readonly running: number
  readonly done: number
  readonly failed: number
  readonly cancelled: number
  /** Tasks ever accepted. */
  readonly accepted: number
  /** Final tasks dropped by retention or replaced by a reused id. */
  readonly removed: number
  /** Runs taken and not completed yet (includes runs of tasks cancelled while running). */
  readonly inFlight: number
  readonly heapEntries: number
  readonly deadEntries: number
}

/** Per-task data most tasks do not need; absent for a plain one-shot with a generated id. */
class Extras {
  /** The caller's id, or `undefined` for a generated one. */
  id: string | undefined = undefined
  plan: Schedule.Plan | undefined = undefined
  /** The grid slot retries belong to and the next slot is computed from, epoch ms. */
  gridSlot = 0
  retry: Retry.Resolved = Retry.none
  missedRuns: MissedRunPolicy = "catch-up"
  pauseAfter = 0
  consecutiveFailures = 0
  lastFailure: Outcome | undefined = undefined
  scheduleError: unknown = undefined
  /** Grid slots merged into the pending run at take time (coalesce), until it starts. */
  merged: Dropped | undefined = undefined
}

/**
 * A run taken from the kernel: the job's {@link RunInfo}, plus what the driver needs to report it.
 *
 * @category models
 * @since 0.1.0
 */
export class Run<J> implements RunInfo {
  /** Table index of the task. */
  readonly index: number
  readonly generation: number
  readonly job: J
  readonly slot: number
  readonly scheduledFor: number
  readonly startedAt: number
  readonly attempt: number
  readonly runNumber: number
  /** Grid slots that passed while this run's slot waited, merged into it (coalesce policy). */
  readonly merged: Dropped | undefined
  /** The id, formatted on first read for generated ids (most jobs never read it). */
  private cachedId: string | undefined

  constructor(
    index: number,
    generation: number,
    id: string | undefined,
    job: J,
    slot: number,
    scheduledFor: number,
    startedAt: number,
    attempt: number,
    runNumber: number,
    merged: Dropped | undefined,
  ) {
    this.index = index
    this.generation = generation
    this.cachedId = id
    this.job = job
    this.slot = slot
    this.scheduledFor = scheduledFor
    this.startedAt = startedAt
    this.attempt = attempt
    this.runNumber = runNumber
    this.merged = merged
  }

  get id(): TaskId {
    if (this.cachedId === undefined) this.cachedId = formatId(this.index, this.generation)
    return this.cachedId as TaskId
  }

  /** The run info alone, as a plain object. */
  toJSON(): RunInfo {
    return {
      id: this.id,
      generation: this.generation,
      slot: this.slot,
      scheduledFor: this.scheduledFor,
      startedAt: this.startedAt,
      attempt: this.attempt,
      runNumber: this.runNumber,
    }
  }
}

/**
 * The generated id of table row `index` at `generation`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const formatId = (index: number, generation: number): TaskId =>
  `#${index}.${generation}` as TaskId

const GENERATED = /^#(0|[1-9]\d*)\.([1-9]\d*)$/

/** The completion event handed to the machine's guards; `nextSlot` is computed on first read. */
class Completion {
  type: "SUCCEED" | "FAIL" = "SUCCEED"
  private kernel: Kernel<unknown> | undefined = undefined
  private index = 0
  private finishedAt = 0
  private computed = false
  next: Next | undefined = undefined

  reset(type: "SUCCEED" | "FAIL", kernel: Kernel<unknown>, index: number, finishedAt: number) {
    this.type = type
    this.kernel = kernel
    this.index = index
    this.finishedAt = finishedAt
    this.computed = false
    this.next = undefined
  }

  get nextSlot(): number | undefined {
    if (!this.computed) {
      this.computed = true
      this.next = (this.kernel as Kernel<unknown>).computeNext(this.index, this.finishedAt)
    }
    return this.next?.slot
  }
}

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
  // ---- task table: row i describes one task; only this class writes it ----
  /** Row fields (slot, generation, state, …) and refs (job, side object); see internal/table. */
  private readonly t = new Table<J, Extras>(INITIAL_CAPACITY)
  /** Rows below `top` have been used; evicted ones are handed out again by `ring`. */
  private top = 0
  /** Caller-supplied ids of tasks that are live or retained. */
  private ids = new Map<string, number>()

  private readonly heap = new TimerHeap()
  /** Global push counter (SPEC §4): ties in slot and priority go to the earlier push. */
  private seq = 0
  /** Heap entries that are not live (cancelled or replaced tasks). */
  private dead = 0

  /** Tasks per lifecycle state index. */
  private readonly counts = new Float64Array(5)
  private accepted = 0
  private removed = 0
  private inFlight = 0

  // ---- retention ----
  private readonly maxFinished: number
  private readonly maxAgeMs: number
  /** Final tasks in the order they ended, and the rows freed by evicting them. */
  private readonly ring = new FinalRing()

  private readonly random: Random.Random
  /** Reused arguments for guards and ops; valid only within one synchronous step. */
  private readonly context: Lifecycle.TaskContext = {
    attempt: 1,
    maxRetries: 0,
    runNumber: 0,
    consecutiveFailures: 0,
    pauseAfter: 0,
  }
  private readonly completion = new Completion()
  private readonly args: { context: Lifecycle.TaskContext; event: Lifecycle.TaskEvent }

  constructor(options: KernelOptions = {}) {
    const retention = options.retention ?? {}
    const unknown = unknownKey(retention, retentionKeys, "retention.")
    if (unknown !== undefined) throw unknown
    const maxFinished = retention.maxFinished ?? 10_000
    const ageInput = retention.maxAge ?? retention.maxAgeMs
    const maxAgeMs =
      ageInput === undefined
        ? MAX_MS
        : toMillisWith(ageInput, (reason) => {
            const field = retention.maxAge === undefined ? "retention.maxAgeMs" : "retention.maxAge"
            return new InvalidOption({
              field,
              value: ageInput,
              message: `${field} ${reason}, got ${show(ageInput)}`,
            })
          })
    if (typeof maxAgeMs !== "number") throw maxAgeMs
    if (!Number.isSafeInteger(maxFinished) || maxFinished < 0) {
      throw new InvalidOption({
        field: "retention.maxFinished",
        value: maxFinished,
        message: `retention.maxFinished must be a non-negative integer, got ${show(maxFinished)}`,
      })
    }
    this.maxFinished = maxFinished
    this.maxAgeMs = maxAgeMs
    this.random = options.random ?? Random.seeded(0)
    this.args = { context: this.context, event: this.completion as unknown as Lifecycle.TaskEvent }
  }

  // ------------------------------------------------------------------ accept

  /**
   * Validates and accepts a task at `now`, returning its id, or the typed error of the first bad
   * option (and then nothing has changed). O(log n).
   */
  schedule(options: TaskOptions<J>, now: number): TaskId | ScheduleError {
    if (typeof options !== "object" || options === null) {
      return new InvalidOption({
        field: "options",
        value: options,
        message: `options must be an object, got ${show(options)}`,
      })
    }
    const unknown = unknownKey(options, taskOptionKeys)
    if (unknown !== undefined) return unknown
    const priority = options.priority ?? "normal"
    const rank = priority === "normal" ? 1 : priority === "high" ? 0 : priority === "low" ? 2 : -1
    if (rank < 0) {
      return new InvalidPriority({
        field: "priority",
        value: priority,
        message: `priority must be "high", "normal" or "low", got ${show(priority)}`,
      })
    }
    const retry = Retry.resolve(options.retry)
    if (!("maxRetries" in retry)) return retry
    const missedRuns = options.missedRuns ?? "catch-up"
    if (missedRuns !== "catch-up" && missedRuns !== "coalesce" && missedRuns !== "skip") {
      return new InvalidOption({
        field: "missedRuns",
        value: missedRuns,
        message: `missedRuns must be "catch-up", "coalesce" or "skip", got ${show(missedRuns)}`,
      })
    }
    const pauseAfter = options.pauseAfterConsecutiveFailures ?? 0
    if (!Number.isSafeInteger(pauseAfter) || pauseAfter < 0) {
      return new InvalidOption({
        field: "pauseAfterConsecutiveFailures",
        value: pauseAfter,
        message: `pauseAfterConsecutiveFailures must be a non-negative integer (0 = never), got ${show(pauseAfter)}`,
      })
    }
    const id = options.id
    let replaced = -1
    if (id !== undefined) {
      if (typeof id !== "string" || id.length === 0 || GENERATED.test(id)) {
        return new InvalidOption({
          field: "id",
          value: id,
          message: `id must be a non-empty string not of the generated form "#<n>.<n>", got ${show(id)}`,
        })
      }
      const existing = this.ids.get(id)
      if (existing !== undefined) {
        const s = this.t.state(existing)
        if (s === SCHEDULED || s === RUNNING) {
          return new DuplicateTaskId({
            field: "id",
            value: id,
            message: `id ${show(id)} belongs to a task that is still ${Lifecycle.states[s]}`,
          })
        }
        replaced = existing
      }
    }
    const schedule = options.schedule
    let first: number
    let plan: Schedule.Plan | undefined
    const delay = schedule?._tag === "Once" ? schedule.delay : undefined
    if (
      typeof delay === "number" &&
      Number.isSafeInteger(delay) &&
      delay >= 0 &&
      now + delay <= MAX_MS
    ) {
      // The common case, without allocating a Resolved.
      first = now + delay
      plan = undefined
    } else {
      const resolved = Schedule.resolve(schedule, now)
      if (!("first" in resolved)) return resolved
      first = resolved.first
      plan = resolved.plan
    }

    // Accepted: from here on nothing can fail.
    this.expire(now)
    // Expiring may just have evicted the final task that held this id: its row is then free and
    // already uncounted, so replacing it would count its removal twice.
    if (replaced >= 0 && !this.present(replaced)) replaced = -1
    const i = replaced >= 0 ? this.replace(replaced) : this.allocate()
    let extra: Extras | undefined
    if (
      id !== undefined ||
      plan !== undefined ||
      retry !== Retry.none ||
      pauseAfter !== 0 ||
      missedRuns !== "catch-up"
    ) {
      extra = new Extras()
      extra.id = id
      extra.plan = plan
      extra.gridSlot = first
      extra.retry = retry
      extra.missedRuns = missedRuns
      extra.pauseAfter = pauseAfter
      if (id !== undefined) this.ids.set(id, i)
    }
    this.t.setJob(i, options.job)
    this.t.setExtra(i, extra)
    this.t.setState(i, SCHEDULED)
    this.t.setRank(i, rank)
    this.t.setSlot(i, first)
    this.t.setAttempt(i, 1)
    this.t.setRuns(i, 0)
    // `at`, cron and custom schedules name calendar instants; the rest count from a delay.
    const tag = schedule?._tag
    this.t.setAnchor(
      i,
      tag === "At" || tag === "Cron" || tag === "Custom" ? WALL_TASK | WALL_SLOT : 0,
    )
    this.heap.push(first, rank * RANK_STRIDE + this.seq++, i, this.t.gen(i))
    this.bump(SCHEDULED, 1)
    this.accepted++
    return (id ?? formatId(i, this.t.gen(i))) as TaskId
  }

  // ------------------------------------------------------------------ cancel and query

  /**
   * Cancels a `scheduled` or `running` task: true when it was one of those, false for an unknown
   * or final task. A running task's run is not stopped here (its outcome is still reported by
   * {@link complete}), but it is never rescheduled. O(1) amortised: the heap entry dies in place
   * and the heap is compacted when dead entries pass half of it.
   */
  cancel(id: string, now: number): boolean {
    const i = this.lookup(id)
    if (i < 0) return false
    const s = this.t.state(i)
    const edge = Lifecycle.step(s, CANCEL, this.args)
    if (edge === undefined) return false
    this.t.setState(i, edge.target)
    this.bump(s, -1)
    this.bump(edge.target, 1)
    if (s === SCHEDULED) {
      this.dead++
      if (this.dead * 2 > this.heap.size) this.compact()
    }
    this.finish(i, now)
    this.expire(now)
    return true
  }

  /** The task's state, or `"unknown"` for an id never seen or dropped by retention. O(1). */
  status(id: string): TaskState | "unknown" {
    const i = this.lookup(id)
    return i < 0 ? "unknown" : (Lifecycle.states[this.t.state(i)] as TaskState)
  }

  /** Everything known about a task, or `undefined` for an unknown id. O(1). */
  info(id: string): TaskInfo | undefined {
    const i = this.lookup(id)
    if (i < 0) return undefined
    const extra = this.t.extra(i)
    const plan = extra?.plan
    return {
      id: (extra?.id ?? formatId(i, this.t.gen(i))) as TaskId,
      generation: this.t.gen(i),
      state: Lifecycle.states[this.t.state(i)] as TaskState,
      priority: (["high", "normal", "low"] as const)[this.t.rank(i)] as Priority,
      kind: plan === undefined ? "once" : plan.kind,
      scheduledFor: this.t.slot(i),
      attempt: this.t.attempt(i),
      runNumber: this.t.runs(i),
      consecutiveFailures: extra?.consecutiveFailures ?? 0,
      lastFailure: extra?.lastFailure,
      scheduleError: extra?.scheduleError,
      finishedAt: this.t.state(i) >= DONE ? this.ring.finishedAt(this.t.ticket(i)) : undefined,
      runningSince: this.t.state(i) === RUNNING ? this.t.ticket(i) : undefined,
    }
  }

  /**
   * The table row of a live or retained task, or -1. Side tables indexed like the kernel's own
   * (as `Run.index`) use it; a row is reused after its task is dropped, so pair it with the
   * task's generation. O(1).
   */
  rowOf(id: string): number {
    return this.lookup(id)
  }

  /** Ids of every task the kernel knows (live and retained final ones), in table order. O(n). */
  taskIds(): Array<TaskId> {
    const out: Array<TaskId> = []
    for (let i = 0; i < this.top; i++) {
      if (!this.present(i)) continue
      out.push((this.t.extra(i)?.id ?? formatId(i, this.t.gen(i))) as TaskId)
    }
    return out
  }

  // ------------------------------------------------------------------ run

  /**
   * The earliest pending slot, or `undefined` when nothing is scheduled. Drops dead entries
   * that have surfaced. O(1) amortised.
   */
  nextSlot(): number | undefined {
    const heap = this.heap
    while (heap.size > 0) {
      const i = heap.topTask()
      if (this.t.gen(i) === heap.topGen() && this.t.state(i) === SCHEDULED) return heap.topSlot()
      heap.pop()
      this.dead--
    }
    return undefined
  }

  /**
   * Takes the first run with slot `<= limit` (SPEC §4 order) and moves its task to `running`,
   * started at `max(now, slot)`; `undefined` when none is that early. `limit` defaults to `now`
   * (what is due now); a stepping driver passes its end time and moves its clock to the run's
   * `startedAt`. A late grid slot of a `coalesce` task is first moved to the latest grid slot
   * `<= min(now, limit)` (SPEC §3). O(log n).
   */
  takeDue(now: number, limit: number = now): Run<J> | undefined {
    const heap = this.heap
    const t = this.t
    while (heap.size > 0) {
      const slot = heap.topSlot()
      if (slot > limit) return undefined
      const i = heap.topTask()
      const g = heap.topGen()
      // Read the row before popping: the row and its refs are cold (rows are visited in slot
      // order, not in the order they were written), and these loads can then complete while
      // the pop's sift runs, instead of stalling after it.
      const live = t.gen(i) === g && t.state(i) === SCHEDULED
      const job = t.job(i) as J
      const extra = t.extra(i)
      heap.pop()
      if (!live) {
        this.dead--
        continue
      }
      if (slot < now && extra !== undefined && extra.missedRuns === "coalesce") {
        // Never past `limit`: the caller asked for the runs due by then.
        const latest = this.coalesce(i, extra, slot, Math.min(now, limit))
        if (latest !== undefined) {
          // Later grid slots passed while this one waited (the clock jumped, or the driver was
          // late): one run stands for all of them, as the latest (SPEC §3). It goes back into
          // the heap at that slot, so runs due before it still go first (SPEC §4).
          heap.push(latest, t.rank(i) * RANK_STRIDE + this.seq++, i, g)
          continue
        }
      }
      const ctx = this.load(i, extra)
      Lifecycle.step(SCHEDULED, START, this.args)
      t.setState(i, RUNNING)
      t.setRuns(i, ctx.runNumber)
      const startedAt = Math.max(slot, now)
      // Until the task is final, the ticket field holds when its current run started.
      t.setTicket(i, startedAt)
      this.counts[SCHEDULED] = (this.counts[SCHEDULED] as number) - 1
      this.counts[RUNNING] = (this.counts[RUNNING] as number) + 1
      this.inFlight++
      let merged: Dropped | undefined
      if (extra !== undefined && extra.merged !== undefined) {
        merged = extra.merged
        extra.merged = undefined
      }
      return new Run(
        i,
        g,
        extra?.id,
        job,
        // A retry keeps the slot it belongs to; its heap slot is its due time.
        ctx.attempt > 1 && extra !== undefined ? extra.gridSlot : slot,
        slot,
        startedAt,
        ctx.attempt,
        ctx.runNumber,
        merged,
      )
    }
    return undefined
  }

  /**
   * Reports a run's outcome at `finishedAt` and applies the lifecycle: the task is scheduled
   * again (a retry, or its next slot under its missed-run policy) or reaches a final state.
   * A run whose task was cancelled (or whose id was reused) meanwhile changes nothing but is
   * still reported. Returns the {@link RunRecord} when `record` is set. O(log n).
   */
  complete(
    run: Run<J>,
    outcome: Outcome,
    finishedAt: number,
    record: boolean,
  ): RunRecord | undefined {
    const i = run.index
    this.inFlight--
    if (this.t.gen(i) !== run.generation || this.t.state(i) !== RUNNING) {
      this.expire(finishedAt)
      if (!record) return undefined
      // Cancelled while running, or since dropped by retention (then it was final: cancelled).
      const kept = this.t.gen(i) === run.generation && this.present(i)
      const state = kept ? (Lifecycle.states[this.t.state(i)] as TaskState) : "cancelled"
      return makeRecord(run, outcome, finishedAt, state, "final", undefined, undefined)
    }
    const failed = outcome.kind !== "succeeded"
    const completion = this.completion
    completion.reset(failed ? "FAIL" : "SUCCEED", this as Kernel<unknown>, i, finishedAt)
    const ctx = this.load(i)
    const edge = Lifecycle.step(RUNNING, failed ? FAIL : SUCCEED, this.args) as Lifecycle.Edge
    const target = edge.target
    this.t.setState(i, target)
    this.t.setAttempt(i, ctx.attempt)
    this.bump(RUNNING, -1)
    this.bump(target, 1)
    let extra = this.t.extra(i)
    if (failed) {
      if (extra === undefined) {
        extra = new Extras()
        this.t.setExtra(i, extra)
      }
      extra.lastFailure = outcome
    }
    if (extra !== undefined) extra.consecutiveFailures = ctx.consecutiveFailures
    let nextSlot: number | undefined
    let continuation: Continuation = "final"
    let dropped: Dropped | undefined
    if (edge.effect === "scheduleNext") {
      const next = completion.next as Next
      nextSlot = next.slot
      dropped = next.dropped
      ;(extra as Extras).gridSlot = nextSlot
      continuation = "next"
      const anchor = this.t.anchor(i)
      this.t.setAnchor(i, anchor & WALL_TASK ? anchor | WALL_SLOT : anchor)
    } else if (edge.effect === "scheduleRetry") {
      const delay = Retry.backoff((extra as Extras).retry, ctx.attempt - 1, this.random)
      nextSlot = Math.min(finishedAt + delay, MAX_MS)
      continuation = "retry"
      // A retry is due a backoff after the failure: a delay, whatever the task's schedule.
      this.t.setAnchor(i, this.t.anchor(i) & ~WALL_SLOT)
    }
    if (nextSlot !== undefined) {
      this.t.setSlot(i, nextSlot)
      this.heap.push(nextSlot, this.t.rank(i) * RANK_STRIDE + this.seq++, i, run.generation)
    } else {
      this.finish(i, finishedAt)
    }
    this.expire(finishedAt)
    if (!record) return undefined
    return makeRecord(
      run,
      outcome,
      finishedAt,
      Lifecycle.states[target] as TaskState,
      continuation,
      nextSlot,
      dropped,
    )
  }

  /**
   * For a coalescing grid task whose pending slot `slot` (a grid slot, not a retry) is late at
   * `upTo`: moves it to the latest grid slot `<= upTo` and returns that slot, or `undefined` when
   * no later grid slot has passed.
   */
  private coalesce(i: number, extra: Extras, slot: number, upTo: number): number | undefined {
    const plan = extra.plan
    if (plan === undefined || (plan.kind !== "fixed-rate" && plan.kind !== "cron")) return undefined
    if (this.t.attempt(i) !== 1) return undefined
    const latest = plan.grid.atOrBefore(upTo)
    if (latest === undefined || latest <= slot) return undefined
    // The slots from `slot` up to the one before `latest` get no run of their own.
    const before = plan.grid.atOrBefore(latest - 1) ?? slot
    const merged = MissedRun.range(plan.grid, slot, before)
    extra.merged =
      extra.merged === undefined
        ? merged
        : {
            first: extra.merged.first,
            last: merged.last,
            count: extra.merged.count + merged.count,
            exact: extra.merged.exact && merged.exact,
          }
    extra.gridSlot = latest
    this.t.setSlot(i, latest)
    return latest
  }

  /**
   * Re-anchors the kernel's time axis by `delta` ms after the wall clock stepped (SPEC §2): every
   * time that counts from a delay — a `once` or grid slot, a fixed-rate grid, a pending retry —
   * moves by `delta`, so it stays as far away as it was; an `at` instant or a cron match stays
   * put, so it keeps its calendar meaning. A driver whose `now` jumped by `delta` with the wall
   * clock calls this once; nothing fires early or late because of the step. O(n).
   */
  shift(delta: number): void {
    if (delta === 0 || !Number.isSafeInteger(delta)) return
    const t = this.t
    for (let i = 0; i < this.top; i++) {
      const state = t.state(i)
      if (state !== SCHEDULED && state !== RUNNING) continue
      const anchor = t.anchor(i)
      if (state === SCHEDULED && (anchor & WALL_SLOT) === 0) t.setSlot(i, t.slot(i) + delta)
      if (anchor & WALL_TASK) continue
      const extra = t.extra(i)
      if (extra === undefined) continue
      extra.gridSlot += delta
      const plan = extra.plan
      // The grid moves with its slots: the next slot is computed from the shifted grid slot.
      if (plan?.kind === "fixed-rate") {
        extra.plan = { ...plan, grid: MissedRun.periodic(extra.gridSlot, plan.period) }
      }
    }
    this.heap.shift(
      delta,
      (i, gen) => t.gen(i) === gen && t.state(i) === SCHEDULED && (t.anchor(i) & WALL_SLOT) === 0,
    )
  }

  /** @internal The schedule's next slot for row `i` after a run that ended at `finishedAt`. */
  computeNext(i: number, finishedAt: number): Next | undefined {
    const extra = this.t.extra(i)
    const plan = extra?.plan
    if (extra === undefined || plan === undefined) return undefined
    const next = Schedule.nextAfterRun(plan, extra.missedRuns, extra.gridSlot, finishedAt)
    if (next !== undefined && !("slot" in next)) {
      extra.scheduleError = next as InvalidTime
      return undefined
    }
    return next
  }

  // ------------------------------------------------------------------ introspection

  /** Counts by state and heap figures. O(1). */
  stats(): Stats {
    const c = this.counts
    return {
      scheduled: c[SCHEDULED] as number,
      running: c[RUNNING] as number,
      done: c[DONE] as number,
      failed: c[FAILED] as number,
      cancelled: c[CANCELLED] as number,
      accepted: this.accepted,
      removed: this.removed,
      inFlight: this.inFlight,
      heapEntries: this.heap.size,
      deadEntries: this.dead,
    }
  }

  /** Bytes held by the typed arrays of the heap and the task table (jobs and side objects excluded). */
  get arrayBytes(): number {
    return this.heap.byteLength + this.t.byteLength
  }

  /**
   * Checks SPEC §14's structural invariants — heap order, accounting, one live heap entry per
   * scheduled task at its slot, the dead-entry count — and throws {@link InvariantViolation} on
   * the first break. O(n); for tests.
   */
  checkInvariants(): void {
    const fail = (message: string): never => {
      throw new InvariantViolation({ message })
    }
    this.heap.verify()
    const counted = new Float64Array(5)
    for (let i = 0; i < this.top; i++) {
      const s = this.t.state(i)
      if (this.present(i)) counted[s] = (counted[s] as number) + 1
    }
    for (let s = 0; s < 5; s++) {
      if (counted[s] !== this.counts[s]) {
        fail(`count of ${Lifecycle.states[s]} is ${this.counts[s]}, table has ${counted[s]}`)
      }
    }
    const total = this.counts.reduce((a, b) => a + b, 0)
    if (total !== this.accepted - this.removed) {
      fail(`states sum to ${total}, accepted - removed = ${this.accepted - this.removed}`)
    }
    const liveEntries = new Map<number, number>()
    let dead = 0
    this.heap.forEach((slot, _order, i, g) => {
      if (this.t.gen(i) === g && this.t.state(i) === SCHEDULED) {
        if (liveEntries.has(i)) fail(`task row ${i} has two live heap entries`)
        if (slot !== this.t.slot(i))
          fail(`task row ${i} is due ${this.t.slot(i)}, its entry says ${slot}`)
        liveEntries.set(i, slot)
      } else dead++
    })
    if (liveEntries.size !== this.counts[SCHEDULED]) {
      fail(`${liveEntries.size} live heap entries for ${this.counts[SCHEDULED]} scheduled tasks`)
    }
    if (dead !== this.dead) fail(`${dead} dead heap entries, counter says ${this.dead}`)
    if (this.inFlight < (this.counts[RUNNING] as number)) {
      fail(`${this.inFlight} runs in flight for ${this.counts[RUNNING]} running tasks`)
    }
    for (const [id, i] of this.ids) {
      if (!this.present(i) || this.t.extra(i)?.id !== id)
        fail(`id ${id} maps to row ${i} of another task`)
    }
    this.ring.forEachFree((i) => {
      if (this.present(i)) fail(`row ${i} is free for reuse but holds a task`)
    })
  }

  // ------------------------------------------------------------------ internals

  /** Row of a live or retained task, or -1. */
  private lookup(id: string): number {
    if (typeof id !== "string") return -1
    if (id.charCodeAt(0) === 35 /* # */) {
      const i = this.lookupGenerated(id)
      if (i >= 0) return i
    }
    // Caller ids may start with "#" too, as long as they are not of the generated form.
    const i = this.ids.get(id)
    return i === undefined ? -1 : i
  }

  /**
   * Row of a live or retained task with the generated id `id` (`#<index>.<generation>`), or -1.
   * Parsed digit by digit: no substrings, so a lookup allocates nothing.
   */
  private lookupGenerated(id: string): number {
    const n = id.length
    let k = 1
    let i = 0
    let g = 0
    // A leading zero only as the whole number ("#0.1"), as formatId writes it.
    if (k >= n || (id.charCodeAt(k) === 48 && id.charCodeAt(k + 1) !== 46)) return -1
    for (; k < n; k++) {
      const c = id.charCodeAt(k)
      if (c === 46 /* . */) break
      if (c < 48 || c > 57 || i > 0xffffffff) return -1
      i = i * 10 + (c - 48)
    }
    if (k === 1 || k >= n - 1 || id.charCodeAt(k + 1) === 48) return -1
    for (k++; k < n; k++) {
      const c = id.charCodeAt(k)
      if (c < 48 || c > 57 || g > 0xffffffff) return -1
      g = g * 10 + (c - 48)
    }
    if (
      i >= this.top ||
      this.t.gen(i) !== g ||
      !this.present(i) ||
      this.t.extra(i)?.id !== undefined
    ) {
      return -1
    }
    return i
  }

  /** Loads row `i`'s machine context into the reused context object. */
  private load(i: number, extra: Extras | undefined = this.t.extra(i)): Lifecycle.TaskContext {
    const ctx = this.context
    ctx.attempt = this.t.attempt(i)
    ctx.runNumber = this.t.runs(i)
    if (extra === undefined) {
      ctx.maxRetries = 0
      ctx.consecutiveFailures = 0
      ctx.pauseAfter = 0
    } else {
      ctx.maxRetries = extra.retry.maxRetries
      ctx.consecutiveFailures = extra.consecutiveFailures
      ctx.pauseAfter = extra.pauseAfter
    }
    return ctx
  }

  private bump(state: number, by: number): void {
    this.counts[state] = (this.counts[state] as number) + by
  }

  /** Whether row `i` (below `top`) holds a live or retained task, rather than an evicted one. */
  private present(i: number): boolean {
    return this.t.state(i) < DONE || this.t.ticket(i) >= this.ring.head
  }

  private allocate(): number {
    let i = this.ring.takeFree()
    if (i < 0) {
      i = this.top++
      if (i === this.t.capacity) this.t.grow(this.t.capacity * 2)
    }
    return this.renew(i)
  }

  /** Gives a retained final task's row to a new task with the same caller id. */
  private replace(i: number): number {
    const t = this.t
    this.ring.markStale(t.ticket(i))
    this.bump(t.state(i), -1)
    this.removed++
    return this.renew(i)
  }

  /** Bumps row `i`'s generation, so the previous task's heap entries and generated id die. */
  private renew(i: number): number {
    let g = (this.t.gen(i) + 1) >>> 0
    if (g === 0) g = 1
    this.t.setGen(i, g)
    return i
  }

  /** Records that row `i` reached a final state at `now`, for retention, and drops its job. */
  private finish(i: number, now: number): void {
    const t = this.t
    t.setTicket(i, this.ring.push(i, t.state(i) | (t.hasExtra(i) ? HAS_EXTRA : 0), now))
    t.setJob(i, undefined)
  }

  /**
   * Evicts final tasks beyond the retention count or age, oldest first. O(1) amortised, and
   * without touching an evicted task's row unless it has a side object to drop.
   */
  private expire(now: number): void {
    const ring = this.ring
    const counts = this.counts
    while (ring.retained > 0) {
      const flags = ring.oldestFlags()
      if ((flags & STALE) === 0) {
        const finals =
          (counts[DONE] as number) + (counts[FAILED] as number) + (counts[CANCELLED] as number)
        if (finals <= this.maxFinished && ring.oldestAt() + this.maxAgeMs > now) return
        this.bump(flags & STATE_MASK, -1)
        this.removed++
        if ((flags & HAS_EXTRA) !== 0) {
          const i = ring.oldestRow()
          const id = (this.t.extra(i) as Extras).id
          if (id !== undefined && this.ids.get(id) === i) this.ids.delete(id)
          this.t.setExtra(i, undefined)
        }
      }
      ring.head++
    }
  }

  private compact(): void {
    this.heap.compact((i, g) => this.t.gen(i) === g && this.t.state(i) === SCHEDULED)
    this.dead = 0
  }
}

const makeRecord = (
  run: Run<unknown>,
  outcome: Outcome,
  finishedAt: number,
  state: TaskState,
  continuation: Continuation,
  nextSlot: number | undefined,
  dropped: Dropped | undefined,
): RunRecord => ({
  kind: continuation === "retry" ? "retried" : "ran",
  id: run.id,
  generation: run.generation,
  slot: run.slot,
  scheduledFor: run.scheduledFor,
  startedAt: run.startedAt,
  attempt: run.attempt,
  runNumber: run.runNumber,
  finishedAt,
  outcome,
  state,
  continuation,
  nextSlot,
  dropped,
  merged: run.merged,
})
