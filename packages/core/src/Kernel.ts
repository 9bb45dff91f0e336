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
import * as Breaker from "./Breaker.ts"
import {
  DuplicateTaskId,
  InvalidOption,
  InvariantViolation,
  type ScheduleError,
  show,
  unknownKey,
} from "./Errors.ts"
import { RANK_STRIDE, TimerHeap } from "./Heap.ts"
import { FinalRing, HAS_EXTRA, STALE, STATE_MASK } from "./internal/finalRing.ts"
import { Table, WALL_SLOT, WALL_TASK } from "./internal/table.ts"
import * as Lifecycle from "./Lifecycle.ts"
import type { Dropped, MissedRunPolicy } from "./MissedRun.ts"
import * as MissedRun from "./MissedRun.ts"
import * as Options from "./Options.ts"
import * as Random from "./Random.ts"
import * as Retry from "./Retry.ts"
import * as Rules from "./Rules.ts"
import * as Schedule from "./Schedule.ts"
import type {
  BreakerState,
  Occurrence,
  Outcome,
  PauseReason,
  Priority,
  RunInfo,
  RunRecord,
  TaskId,
  TaskInfo,
  TaskState,
} from "./Task.ts"
import { type DurationInput, MAX_MS, toMillisWith } from "./Time.ts"

const {
  SCHEDULED,
  RUNNING,
  PAUSED,
  DONE,
  FAILED,
  CANCELLED,
  START,
  CANCEL,
  PAUSE,
  RESUME,
  EXPIRE,
} = Lifecycle
const NO_WINDOW = Rules.NO_WINDOW
const STATE_COUNT = Lifecycle.states.length
const INITIAL_CAPACITY = 64
const NO_TAGS: ReadonlyArray<string> = Object.freeze([])

/**
 * The keys of {@link TaskOptions}. A driver that adds options of its own (the runtime's
 * `timeout`) extends this set and removes them before calling {@link Kernel.schedule}.
 *
 * @category models
 * @since 0.1.0
 */
export const taskOptionKeys: ReadonlySet<string> = Rules.optionKeys

/**
 * The keys {@link Kernel.update} accepts: every task option but the id. A driver with options
 * of its own (the runtime's `timeout`) extends this set as it does {@link taskOptionKeys}.
 *
 * @category models
 * @since 0.2.0
 */
export const updateKeys: ReadonlySet<string> = new Set(
  [...taskOptionKeys].filter((key) => key !== "id"),
)

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
  /**
   * A recurring task is paused (reason `failures`) after this many slots in a row fail (retries
   * used up). 0 (default) = never.
   */
  readonly pauseAfterConsecutiveFailures?: number | undefined
  /**
   * The catch-up window (SPEC §3), for fixed-rate, cron and one-shot schedules: a run that would
   * start more than this after its slot is skipped (cause `window`), and for a one-shot it is a
   * deadline: past it the run expires and the task ends `failed`.
   */
  readonly window?: DurationInput | undefined
  /** Short labels to list and control tasks by (SPEC §15): up to 32, each 1–64 characters. */
  readonly tags?: ReadonlyArray<string> | undefined
  /**
   * The task's circuit breaker (SPEC §7): its own policy, or the name of one defined in the
   * kernel's {@link KernelOptions.breakers}, shared with the other tasks that name it.
   */
  readonly breaker?: Breaker.BreakerPolicy | string | undefined
}

/**
 * What {@link Kernel.update} changes: any task option but the id. An absent or `undefined` key
 * changes nothing; `window: null` and `breaker: null` remove them, `tags: []` clears the tags.
 *
 * @category models
 * @since 0.2.0
 */
export interface UpdateOptions<J> {
  readonly job?: J | undefined
  readonly schedule?: Schedule.Schedule | undefined
  readonly priority?: Priority | undefined
  readonly retry?: Retry.RetryPolicy | undefined
  readonly missedRuns?: MissedRunPolicy | undefined
  readonly pauseAfterConsecutiveFailures?: number | undefined
  readonly window?: DurationInput | null | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly breaker?: Breaker.BreakerPolicy | string | null | undefined
}

/**
 * Which tasks {@link Kernel.tasks}, `pauseAll`, `resumeAll` and `cancelAll` touch: those matching
 * every given field.
 *
 * @category models
 * @since 0.2.0
 */
export interface TaskFilter {
  readonly state?: TaskState | undefined
  readonly tag?: string | undefined
  readonly kind?: TaskInfo["kind"] | undefined
}

/**
 * What a circuit breaker is doing (SPEC §7), as {@link Kernel.breakers} reports it.
 *
 * @category models
 * @since 0.2.0
 */
export interface BreakerInfo {
  /** A shared breaker's name, or the id of the task that owns it. */
  readonly name: string
  /** Whether it is defined on the kernel and named by tasks, rather than a task's own. */
  readonly shared: boolean
  readonly state: BreakerState
  /** Failed slots in a row, counted while closed. */
  readonly failures: number
  readonly policy: Breaker.Resolved
  /** Times it opened since it last closed. */
  readonly opens: number
  /** When it last opened, epoch ms. */
  readonly openedAt: number | undefined
  /** When an open breaker goes half-open, epoch ms. */
  readonly halfOpenAt: number | undefined
  /** The half-open breaker's probe. */
  readonly probe: TaskId | undefined
  /** Its live tasks. */
  readonly tasks: ReadonlyArray<TaskId>
  /** Those of them it holds (`paused`, reason `breaker`). */
  readonly held: ReadonlyArray<TaskId>
}

/**
 * A live task's next slots given its state (SPEC §15), from {@link Kernel.explain}.
 *
 * @category models
 * @since 0.2.0
 */
export interface Explanation {
  readonly id: TaskId
  readonly state: TaskState
  readonly kind: TaskInfo["kind"]
  readonly pausedReason: PauseReason | undefined
  /** The pending run of a `scheduled` task: its slot, when it is due and its attempt. */
  readonly pending:
    | { readonly slot: number; readonly scheduledFor: number; readonly attempt: number }
    | undefined
  /** The catch-up window, ms. */
  readonly window: number | undefined
  /** A one-shot's deadline: its slot + window. */
  readonly deadline: number | undefined
  readonly breaker: BreakerInfo | undefined
  /**
   * Its next slots in order, each with its DST note: a scheduled task's from its pending slot; a
   * running one's after its run; a paused one's as if resumed now (by hand or failure policy) or
   * when its breaker lets it through (half-open time). Empty when nothing would follow.
   */
  readonly slots: ReadonlyArray<Schedule.PreviewSlot>
  /** One sentence per fact that moves those slots (pause, breaker, pending retry, window). */
  readonly notes: ReadonlyArray<string>
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
  /** Default 10,000; at most 10,000,000 (`Options.bounds.maxFinished`). */
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
  /** Circuit breakers shared by name: a task with `breaker: "smtp"` uses `breakers.smtp`. */
  readonly breakers?: Readonly<Record<string, Breaker.BreakerPolicy>>
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
  readonly paused: number
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
  tags: ReadonlyArray<string> = NO_TAGS
  /** The catch-up window in ms, or {@link NO_WINDOW}. */
  windowMs = NO_WINDOW
  /** The task's breaker; it stays set after the task is final (for `info`), membership does not. */
  breaker: BreakerCell | undefined = undefined
  /** Why it is `paused`; undefined in any other state. */
  pausedReason: PauseReason | undefined = undefined
  /** A pause asked for while `running`, applied when the run ends. */
  pauseRequest: PauseReason | undefined = undefined
  /** When it entered `paused`, epoch ms. */
  pausedAt = 0
  /** A schedule change waiting for the slot in progress (a run, a pending retry) to end. */
  restart: Schedule.Schedule | undefined = undefined
  /**
   * Set when a held retry of a grid task resumed: grid slots before it were recorded as skipped,
   * so the slot after the retry is the first grid slot at or after it. Epoch ms, or -1.
   */
  resumeFrom = -1
  /**
   * The earliest start of its next run, epoch ms, or -1: set when a breaker's half-open time,
   * reached by a stepping driver ahead of its clock, let it through (it must not start earlier).
   */
  notBefore = -1
}

/** One circuit breaker's state; only the kernel changes it. */
class BreakerCell {
  readonly name: string
  readonly shared: boolean
  policy: Breaker.Resolved
  status: Breaker.Status = { state: "closed", failures: 0, opens: 0 }
  openedAt: number | undefined = undefined
  /** When an open breaker goes half-open, epoch ms; +Infinity otherwise. */
  halfOpenAt = Number.POSITIVE_INFINITY
  /** The half-open breaker's probe: a row and its generation, or -1. */
  probe = -1
  probeGen = 0
  /** Rows of its live tasks, in the order they joined. */
  readonly members = new Set<number>()

  constructor(name: string, shared: boolean, policy: Breaker.Resolved) {
    this.name = name
    this.shared = shared
    this.policy = policy
  }
}

/** A row as the rules read it; the kernel refills one instance for each decision. */
class RowView implements Rules.Row {
  plan: Schedule.Plan | undefined = undefined
  slot = 0
  dueAt = 0
  attempt = 1
  runNumber = 0
  consecutiveFailures = 0
  retry: Retry.Resolved = Retry.none
  missedRuns: MissedRunPolicy = "catch-up"
  pauseAfter = 0
  windowMs = Rules.NO_WINDOW
  pauseRequest: PauseReason | undefined = undefined
  restart: Schedule.Schedule | undefined = undefined
  resumeFrom = -1
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
  readonly tags: ReadonlyArray<string>
  /** Whether the task has a caller-given id (not a generated `#<row>.<generation>`). */
  readonly named: boolean
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
    tags: ReadonlyArray<string> = NO_TAGS,
  ) {
    this.index = index
    this.generation = generation
    this.cachedId = id
    this.named = id !== undefined
    this.job = job
    this.slot = slot
    this.scheduledFor = scheduledFor
    this.startedAt = startedAt
    this.attempt = attempt
    this.runNumber = runNumber
    this.merged = merged
    this.tags = tags
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
      tags: this.tags,
    }
  }
}

/**
 * `"." + g` for the generations most rows are at: a generated id is made for every accepted task,
 * and a ready suffix saves one string conversion and one concatenation of the three.
 */
const SUFFIXES: ReadonlyArray<string> = Array.from({ length: 256 }, (_, g) => `.${g}`)

/**
 * The generated id of table row `index` at `generation`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const formatId = (index: number, generation: number): TaskId =>
  ("#" + index + (generation < SUFFIXES.length ? SUFFIXES[generation] : `.${generation}`)) as TaskId

const GENERATED = /^#(0|[1-9]\d*)\.([1-9]\d*)$/

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
  private readonly counts = new Float64Array(STATE_COUNT)
  private accepted = 0
  private removed = 0
  private inFlight = 0

  // ---- retention ----
  private readonly maxFinished: number
  private readonly maxAgeMs: number
  /** Final tasks in the order they ended, and the rows freed by evicting them. */
  private readonly ring = new FinalRing()

  private readonly random: Random.Random

  // ---- circuit breakers (SPEC §7) ----
  /** Shared breakers by name, from the options. */
  private readonly named = new Map<string, BreakerCell>()
  /** Every breaker: the shared ones and those of live tasks. */
  private readonly cells = new Set<BreakerCell>()
  /** The earliest half-open time of an open breaker, epoch ms; +Infinity when none is open. */
  private breakerAt = Number.POSITIVE_INFINITY

  /** Occurrences not yet drained by the driver, in order. */
  private pendingOccurrences: Array<Occurrence> = []

  /** Reused arguments for guards and ops; valid only within one synchronous step. */
  private readonly context: Lifecycle.TaskContext = {
    attempt: 1,
    maxRetries: 0,
    runNumber: 0,
    consecutiveFailures: 0,
    pauseAfter: 0,
    pauseRequested: false,
  }
  private readonly args: { context: Lifecycle.TaskContext; event: Lifecycle.TaskEvent } = {
    context: this.context,
    event: { type: "CANCEL" },
  }
  /** Reused row view handed to the rules; valid only within one synchronous step. */
  private readonly view = new RowView()
  /** The row whose run is being settled, for {@link opens}. */
  private settling = 0
  /** Whether the settling row's breaker opens on its failed slot (the rules ask at most once). */
  private readonly opens = (): boolean => this.breakerOpensOnFailure(this.settling)
  /** Working memory of the rules' settle, reused by every completion. */
  private readonly scratch = Rules.makeScratch()
  private readonly settleContext: Rules.SettleContext
  private readonly settleWithBreaker: Rules.SettleContext

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
    const tooMany = Options.integer(
      "retention.maxFinished",
      maxFinished,
      0,
      0,
      Options.bounds.maxFinished,
    )
    if (typeof tooMany !== "number") throw tooMany
    this.maxFinished = maxFinished
    this.maxAgeMs = maxAgeMs
    this.random = options.random ?? Random.seeded(0)
    this.settleContext = { random: this.random }
    this.settleWithBreaker = { random: this.random, breakerOpens: this.opens }
    const breakers = options.breakers ?? {}
    if (typeof breakers !== "object" || breakers === null) {
      throw new InvalidOption({
        field: "breakers",
        value: breakers,
        message: `breakers must be an object of breaker policies by name, got ${show(breakers)}`,
      })
    }
    for (const [name, policy] of Object.entries(breakers)) {
      const resolved = Breaker.resolve(policy, `breakers.${name}`)
      if (!("failures" in resolved)) throw resolved
      const cell = new BreakerCell(name, true, resolved)
      this.named.set(name, cell)
      this.cells.add(cell)
    }
  }

  // ------------------------------------------------------------------ accept

  /**
   * Validates and accepts a task at `now`, returning its id, or the typed error of the first bad
   * option (and then nothing has changed). O(log n).
   */
  schedule(options: TaskOptions<J>, now: number): TaskId | ScheduleError {
    const accepted = Rules.validate(options, now, taskOptionKeys)
    if (!("first" in accepted)) return accepted
    const { rank, retry, missedRuns, pauseAfter, tags, windowMs, first, plan } = accepted
    const breaker = options.breaker === undefined ? undefined : this.resolveBreaker(options.breaker)
    if (breaker instanceof InvalidOption) return breaker
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
        if (s < DONE) {
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
      missedRuns !== "catch-up" ||
      tags.length !== 0 ||
      windowMs !== NO_WINDOW ||
      breaker !== undefined
    ) {
      extra = new Extras()
      extra.id = id
      extra.plan = plan
      extra.gridSlot = first
      extra.retry = retry
      extra.missedRuns = missedRuns
      extra.pauseAfter = pauseAfter
      extra.tags = tags
      extra.windowMs = windowMs
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
    this.push(i, first)
    this.bump(SCHEDULED, 1)
    this.accepted++
    const taskId = (id ?? formatId(i, this.t.gen(i))) as TaskId
    if (breaker !== undefined) this.join(i, extra as Extras, breaker, taskId, now)
    return taskId
  }

  // ------------------------------------------------------------------ cancel and query

  /**
   * Cancels a `scheduled`, `running` or `paused` task: true when it was one of those, false for
   * an unknown or final task. A running task's run is not stopped here (its outcome is still reported by
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
      pausedReason: extra?.pausedReason ?? extra?.pauseRequest,
      tags: extra?.tags ?? NO_TAGS,
      window: extra === undefined || extra.windowMs === NO_WINDOW ? undefined : extra.windowMs,
      breaker: extra?.breaker?.name,
    }
  }

  /** The job of a live or retained task, or `undefined` for an unknown id. O(1). */
  jobOf(id: string): J | undefined {
    const i = this.lookup(id)
    return i < 0 ? undefined : this.t.job(i)
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

  // ------------------------------------------------------------------ controls (SPEC §15)

  /**
   * Pauses a task (SPEC §5, §15): a `scheduled` task becomes `paused` at once (its heap entry
   * dies); a `running` one finishes its run, reports, then becomes `paused`. True when it was
   * one of those; false for a task already paused (or already going to pause), final or unknown.
   * A task held by its breaker or failure policy that is paused by hand stays paused until
   * {@link resume}. O(1) amortised.
   */
  pause(id: string, now: number): boolean {
    const i = this.lookup(id)
    return i >= 0 && this.pauseRow(i, "manual", now)
  }

  /**
   * Resumes a `paused` task (SPEC §15), whatever paused it, or withdraws a pause requested while
   * it runs. The slots that passed while it was paused are recorded once per contiguous range as
   * skipped (cause `paused`, or `breaker`) and never caught up; it continues with a one-shot's or
   * held retry's own slot (due at once if passed), the first grid slot or cron match `>= now`, or
   * for fixed delay (and custom) `max(held slot, now)`. False for any other task. O(log n).
   */
  resume(id: string, now: number): boolean {
    const i = this.lookup(id)
    if (i < 0) return false
    const s = this.t.state(i)
    if (s === RUNNING) {
      const extra = this.t.extra(i)
      if (extra === undefined) return false
      this.load(i, extra)
      if (Lifecycle.step(RUNNING, RESUME, this.args) === undefined) return false
      extra.pauseRequest = undefined
      return true
    }
    if (s !== PAUSED) return false
    this.release(i, now)
    return true
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
    if (typeof changes !== "object" || changes === null) {
      return new InvalidOption({
        field: "changes",
        value: changes,
        message: `changes must be an object, got ${show(changes)}`,
      })
    }
    const unknown = unknownKey(changes, updateKeys)
    if (unknown !== undefined) return unknown
    const i = this.lookup(id)
    if (i < 0) return false
    const s = this.t.state(i)
    if (s >= DONE) return false
    const current = this.t.extra(i)
    // ---- validate every change; nothing is written until all are good ----
    const valid = Rules.validateChanges(changes, now, {
      plan: current?.plan,
      windowMs: current?.windowMs ?? NO_WINDOW,
    })
    if (!("resolved" in valid)) return valid
    const { retry, tags, windowMs, resolved } = valid
    const rank = valid.rank ?? -1
    let breaker: BreakerCell | Breaker.Resolved | null | undefined
    if (changes.breaker === null) breaker = null
    else if (changes.breaker !== undefined) {
      const b = this.resolveBreaker(changes.breaker)
      if (b instanceof InvalidOption) return b
      breaker = b
    }
    // ---- apply ----
    const extra = this.ensureExtra(i)
    if ("job" in changes && changes.job !== undefined) this.t.setJob(i, changes.job)
    if (retry !== undefined) extra.retry = retry
    if (changes.missedRuns !== undefined) extra.missedRuns = changes.missedRuns
    if (changes.pauseAfterConsecutiveFailures !== undefined)
      extra.pauseAfter = changes.pauseAfterConsecutiveFailures
    if (tags !== undefined) extra.tags = tags
    if (windowMs !== undefined) extra.windowMs = windowMs
    let repush = false
    if (rank >= 0 && rank !== this.t.rank(i)) {
      this.t.setRank(i, rank)
      repush = true
    }
    if (resolved !== undefined && changes.schedule !== undefined) {
      if (Rules.scheduleChangeWaits(Lifecycle.states[s] as TaskState, this.t.attempt(i))) {
        // The slot in progress (a run, or a pending retry of it) ends first.
        extra.restart = changes.schedule
      } else {
        extra.restart = undefined
        extra.plan = resolved.plan
        extra.gridSlot = resolved.first
        extra.merged = undefined
        extra.resumeFrom = -1
        this.t.setSlot(i, resolved.first)
        repush = true
      }
    }
    if (repush && s === SCHEDULED) {
      // Push first: the new entry makes the old one dead before a compaction can look at it.
      this.push(i, this.t.slot(i))
      this.kill()
    }
    if (breaker !== undefined && breaker !== extra.breaker) {
      if (extra.breaker !== undefined) this.leave(i, extra.breaker, now)
      extra.breaker = undefined
      if (breaker !== null) this.join(i, extra, breaker, this.idOf(i), now)
      // Held by the breaker it left, and the new one (if any) does not hold it: released (or,
      // while it runs, the breaker's pause request is withdrawn).
      const cell = extra.breaker as BreakerCell | undefined
      if (Breaker.releasedOnLeave(cell?.status.state)) {
        const state = this.t.state(i)
        if (state === PAUSED && extra.pausedReason === "breaker") this.release(i, now)
        else if (state === RUNNING && extra.pauseRequest === "breaker") {
          this.load(i, extra)
          Lifecycle.step(RUNNING, RESUME, this.args)
          extra.pauseRequest = undefined
        }
      }
    }
    return true
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
    this.forEachMatch(filter, (i) => {
      out.push(this.info(this.idOf(i)) as TaskInfo)
    })
    return out
  }

  /** Pauses every task matching `filter` (see {@link pause}); returns the ids it paused. O(n). */
  pauseAll(filter: TaskFilter, now: number): Array<TaskId> {
    return this.changeAll(filter, (i) => this.pauseRow(i, "manual", now))
  }

  /** Resumes every task matching `filter` (see {@link resume}); returns the ids it resumed. O(n). */
  resumeAll(filter: TaskFilter, now: number): Array<TaskId> {
    return this.changeAll(filter, (i) => this.resume(this.idOf(i), now))
  }

  /** Cancels every task matching `filter` (see {@link cancel}); returns the ids it cancelled. O(n). */
  cancelAll(filter: TaskFilter, now: number): Array<TaskId> {
    return this.changeAll(filter, (i) => this.cancel(this.idOf(i), now))
  }

  /**
   * A live task's next `count` slots given its state (SPEC §15): paused, held by a breaker, a
   * retry pending, a window. Pure: changes nothing. `undefined` for an unknown or final id.
   */
  explain(id: string, now: number, count = 5): Explanation | undefined {
    const i = this.lookup(id)
    if (i < 0) return undefined
    const s = this.t.state(i)
    if (s >= DONE) return undefined
    const extra = this.t.extra(i)
    const plan = extra?.plan
    const notes: Array<string> = []
    const cell = extra?.breaker
    const windowMs =
      extra === undefined || extra.windowMs === NO_WINDOW ? undefined : extra.windowMs
    const attempt = this.t.attempt(i)
    const slot = this.t.slot(i)
    let pending: Explanation["pending"]
    /** The first schedule slot to list, and whether the one after the pending retry follows it. */
    let from: number | undefined
    let after: number | undefined
    if (s === SCHEDULED) {
      if (attempt > 1) {
        pending = { slot: extra?.gridSlot ?? slot, scheduledFor: slot, attempt }
        notes.push(
          `retry ${attempt - 1} of slot ${extra?.gridSlot ?? slot} is due at ${slot}; its schedule goes on after it`,
        )
        after = extra?.gridSlot ?? slot
      } else {
        pending = { slot, scheduledFor: slot, attempt }
        from = slot
      }
    } else if (s === RUNNING) {
      notes.push(
        "running: the slot after this run is decided when it ends (its missed-run policy applies)",
      )
      if (extra?.pauseRequest !== undefined)
        notes.push(`it will be paused (${extra.pauseRequest}) when its run ends`)
      after = extra?.gridSlot ?? slot
    } else {
      const reason = (extra as Extras).pausedReason as PauseReason
      let at = now
      if (reason === "breaker" && cell !== undefined && cell.status.state === "open") {
        at = Math.max(now, cell.halfOpenAt)
        notes.push(
          `held by breaker ${cell.name} (open) until ${cell.halfOpenAt}; then one held task runs as its probe, and all resume when the probe's slot succeeds`,
        )
      } else if (reason === "breaker" && cell !== undefined) {
        notes.push(
          `held by breaker ${cell.name} (${cell.status.state}); it resumes when the breaker closes`,
        )
      } else {
        notes.push(
          reason === "manual"
            ? "paused by hand: it runs again only after resume(); the slots below are those it would take if resumed now"
            : "paused by its failure policy: it runs again only after resume(); the slots below are those it would take if resumed now",
        )
      }
      const r = Rules.resume(this.rowView(i, extra), at)
      if (r.retry) {
        notes.push(`a held retry (attempt ${attempt}) runs first, due at ${r.dueAt}`)
        after = extra?.gridSlot ?? slot
      } else from = r.dueAt
    }
    if (windowMs !== undefined) {
      if (plan === undefined) {
        const deadline = (extra as Extras).gridSlot + windowMs
        notes.push(
          deadline < now
            ? `past its deadline (${deadline}): it expires when taken and ends failed`
            : `its deadline is ${deadline}: past it, the run expires and the task ends failed`,
        )
      } else {
        notes.push(`window ${windowMs} ms: a slot not started within it is skipped`)
      }
    }
    const slots: Array<Schedule.PreviewSlot> = []
    const cron = plan?.kind === "cron" ? plan.cron : undefined
    let next =
      from ?? (after !== undefined && plan !== undefined ? following(plan, after) : undefined)
    if (after !== undefined && extra?.restart !== undefined) {
      next = undefined
      notes.push("a schedule change takes effect when this slot ends")
    }
    while (next !== undefined && slots.length < count) {
      slots.push({ slot: next, dst: cron === undefined ? undefined : Schedule.dstNote(cron, next) })
      next = plan === undefined ? undefined : following(plan, next)
    }
    return {
      id: this.idOf(i),
      state: Lifecycle.states[s] as TaskState,
      kind: plan === undefined ? "once" : plan.kind,
      pausedReason: extra?.pausedReason ?? extra?.pauseRequest,
      pending,
      window: windowMs,
      deadline:
        windowMs !== undefined && plan === undefined
          ? (extra as Extras).gridSlot + windowMs
          : undefined,
      breaker: cell === undefined ? undefined : this.breakerInfo(cell),
      slots,
      notes,
    }
  }

  /** Every circuit breaker: the shared ones, then those of live tasks. O(breakers + their tasks). */
  breakers(): Array<BreakerInfo> {
    return [...this.cells].map((cell) => this.breakerInfo(cell))
  }

  /** A shared breaker by name, or a task's own breaker by the task's id; `undefined` if none. */
  breaker(name: string): BreakerInfo | undefined {
    const named = this.named.get(name)
    if (named !== undefined) return this.breakerInfo(named)
    const i = this.lookup(name)
    const cell = i < 0 ? undefined : this.t.extra(i)?.breaker
    return cell === undefined || cell.shared ? undefined : this.breakerInfo(cell)
  }

  /**
   * The occurrences (skipped slots, expired one-shots, pauses, resumes, breaker transitions)
   * since the last call, in order, and forgets them. A driver calls it after each step, so they
   * are never lost nor kept without bound. O(count).
   */
  /** Occurrences waiting to be drained: lets a driver skip {@link drainOccurrences} when 0. O(1). */
  get pendingOccurrenceCount(): number {
    return this.pendingOccurrences.length
  }

  drainOccurrences(): Array<Occurrence> {
    const out = this.pendingOccurrences
    if (out.length === 0) return []
    this.pendingOccurrences = []
    return out
  }

  // ------------------------------------------------------------------ run

  /**
   * The earliest pending slot, or `undefined` when nothing is scheduled. Drops dead entries
   * that have surfaced. An open circuit breaker's half-open time counts as a slot: the driver
   * must call {@link takeDue} then, so the breaker lets its probe through. O(1) amortised.
   */
  nextSlot(): number | undefined {
    const heap = this.heap
    while (heap.size > 0) {
      const i = heap.topTask()
      if (this.isLive(i, heap.topOrder())) {
        const slot = heap.topSlot()
        return Math.min(slot, this.breakerAt)
      }
      heap.pop()
      this.dead--
    }
    return this.breakerAt === Number.POSITIVE_INFINITY ? undefined : this.breakerAt
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
    for (;;) {
      // Many runs due at once (a burst, a driver stepping far ahead) are sorted out of the
      // heap in one batch instead of being popped one by one.
      heap.prepare(limit)
      if (this.breakerAt <= limit && (heap.size === 0 || this.breakerAt <= heap.topSlot())) {
        // A breaker's cool-down ends before the next run: it goes half-open first (SPEC §7).
        this.halfOpen(Math.max(this.breakerAt, now))
        continue
      }
      if (heap.size === 0) return undefined
      const slot = heap.topSlot()
      if (slot > limit) return undefined
      const i = heap.topTask()
      // Read the row before popping: the row and its refs are cold (rows are visited in slot
      // order, not in the order they were written), and these loads can then complete while
      // the pop's sift runs, instead of stalling after it.
      const live = t.state(i) === SCHEDULED && t.ticket(i) === heap.topOrder()
      const g = t.gen(i)
      const job = t.job(i) as J
      const extra = t.extra(i)
      heap.pop()
      if (!live) {
        this.dead--
        continue
      }
      if (
        extra !== undefined &&
        (extra.windowMs !== NO_WINDOW || (slot < now && extra.missedRuns === "coalesce")) &&
        this.movedAtTake(i, g, extra, slot, now, limit)
      ) {
        continue
      }
      const ctx = this.load(i, extra)
      Lifecycle.step(SCHEDULED, START, this.args)
      t.setState(i, RUNNING)
      t.setRuns(i, ctx.runNumber)
      this.counts[SCHEDULED] = (this.counts[SCHEDULED] as number) - 1
      this.counts[RUNNING] = (this.counts[RUNNING] as number) + 1
      this.inFlight++
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
        extra === undefined ? NO_TAGS : extra.tags,
      )
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
    this.inFlight--
    if (this.t.gen(i) !== run.generation || this.t.state(i) !== RUNNING) {
      this.expire(finishedAt)
      if (!record) return undefined
      // Cancelled while running, or since dropped by retention (then it was final: cancelled).
      const kept = this.t.gen(i) === run.generation && this.present(i)
      const state = kept ? (Lifecycle.states[this.t.state(i)] as TaskState) : "cancelled"
      return Rules.finalRecord(run, outcome, finishedAt, state)
    }
    const failed = outcome.kind !== "succeeded"
    let extra = this.t.extra(i)
    this.settling = i
    const settled = Rules.settleInto(
      this.rowView(i, extra),
      outcome,
      finishedAt,
      extra?.breaker === undefined ? this.settleContext : this.settleWithBreaker,
      this.scratch,
    )
    const target = Lifecycle.states.indexOf(settled.state)
    this.t.setState(i, target)
    this.t.setAttempt(i, settled.attempt)
    this.bump(RUNNING, -1)
    this.bump(target, 1)
    if (failed) {
      if (extra === undefined) {
        extra = new Extras()
        this.t.setExtra(i, extra)
      }
      extra.lastFailure = outcome
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
      const anchor = this.t.anchor(i)
      this.t.setAnchor(i, anchor & WALL_TASK ? anchor | WALL_SLOT : anchor)
    } else if (settled.continuation === "retry") {
      // A retry is due a backoff after the failure: a delay, whatever the task's schedule.
      this.t.setAnchor(i, this.t.anchor(i) & ~WALL_SLOT)
    }
    if (extra !== undefined && extra.breaker !== undefined && settled.slotEnded) {
      // Until its push below, a row going back to `scheduled` still holds its start time as
      // ticket; a compaction set off by the breaker pausing its other tasks must not take an
      // old entry whose order key happens to equal it for live. No order key is negative.
      if (target === SCHEDULED) this.t.setTicket(i, -1)
      this.breakerAfterRun(i, extra.breaker, failed, finishedAt)
    }
    if (target === PAUSED) {
      // Held: the slot or retry is kept, not pushed; resume decides when it runs (SPEC §15).
      this.t.setSlot(i, nextSlot as number)
      this.hold(i, extra as Extras, settled.pausedReason as PauseReason, finishedAt)
    } else if (nextSlot !== undefined) {
      this.t.setSlot(i, nextSlot)
      this.push(i, nextSlot)
    } else {
      this.finish(i, finishedAt)
    }
    this.expire(finishedAt)
    if (!record) return undefined
    return into !== undefined && settled.pausedReason === undefined
      ? Rules.recordInto(into, run, outcome, finishedAt, settled)
      : Rules.record(run, outcome, finishedAt, settled)
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
      if (state !== SCHEDULED && state !== RUNNING && state !== PAUSED) continue
      const anchor = t.anchor(i)
      if (state !== RUNNING && (anchor & WALL_SLOT) === 0) t.setSlot(i, t.slot(i) + delta)
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
    this.heap.shift(delta, (i, order) => this.isLive(i, order) && (t.anchor(i) & WALL_SLOT) === 0)
  }

  // ------------------------------------------------------------------ introspection

  /** Counts by state and heap figures. O(1). */
  stats(): Stats {
    const c = this.counts
    return {
      scheduled: c[SCHEDULED] as number,
      running: c[RUNNING] as number,
      paused: c[PAUSED] as number,
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

  /** Tasks in `scheduled` now: `stats().scheduled` without building the stats. O(1). */
  get scheduledCount(): number {
    return this.counts[SCHEDULED] as number
  }

  /**
   * Rows the task table has room for now; it doubles as tasks arrive, and a row index is always
   * below it. A store kept per row beside the kernel (the runtime's ledger) grows with it when
   * tasks are accepted instead of during runs. O(1).
   */
  get rowCapacity(): number {
    return this.t.capacity
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
    const counted = new Float64Array(STATE_COUNT)
    for (let i = 0; i < this.top; i++) {
      const s = this.t.state(i)
      if (this.present(i)) counted[s] = (counted[s] as number) + 1
      if (s === PAUSED && this.present(i)) {
        const extra = this.t.extra(i)
        if (extra?.pausedReason === undefined) fail(`paused task row ${i} has no reason`)
        if (this.t.job(i) === undefined) fail(`paused task row ${i} lost its job`)
      }
      if (s !== RUNNING && this.t.extra(i)?.pauseRequest !== undefined)
        fail(`task row ${i} is ${Lifecycle.states[s]} with a pause request`)
    }
    for (let s = 0; s < STATE_COUNT; s++) {
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
    this.heap.forEach((slot, order, i) => {
      if (this.isLive(i, order)) {
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
    let breakerAt = Number.POSITIVE_INFINITY
    for (const cell of this.cells) {
      const state = cell.status.state
      if (state === "open" && cell.halfOpenAt < breakerAt) breakerAt = cell.halfOpenAt
      if (state !== "open" && cell.halfOpenAt !== Number.POSITIVE_INFINITY)
        fail(`breaker ${cell.name} is ${state} with a half-open time`)
      for (const i of cell.members) {
        const s = this.t.state(i)
        if (!this.present(i) || s >= DONE || this.t.extra(i)?.breaker !== cell)
          fail(`breaker ${cell.name} lists row ${i}, which is not its live task`)
        const probe = cell.probe === i && cell.probeGen === this.t.gen(i)
        const reason = this.t.extra(i)?.pausedReason
        if (state === "open" && s === PAUSED && reason === undefined)
          fail(`breaker ${cell.name} is open and its task row ${i} is paused for no reason`)
        if (state !== "closed" && s === PAUSED && reason === "breaker" && probe)
          fail(`breaker ${cell.name}'s probe row ${i} is still held`)
      }
      if (cell.probe >= 0 && state !== "half-open")
        fail(`breaker ${cell.name} has a probe while ${state}`)
    }
    if (breakerAt !== this.breakerAt)
      fail(`breaker timer says ${this.breakerAt}, open breakers say ${breakerAt}`)
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
      ctx.pauseRequested = false
    } else {
      ctx.maxRetries = extra.retry.maxRetries
      ctx.consecutiveFailures = extra.consecutiveFailures
      ctx.pauseAfter = extra.pauseAfter
      ctx.pauseRequested = extra.pauseRequest !== undefined
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
      // A row never used has generation 0, so its first task's is 1: written without a read, so
      // that a fresh page of the table is first touched by a write. A read first maps the shared
      // zero page and the write after it faults again to copy it: two page faults instead of one.
      this.t.setGen(i, 1)
      return i
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
    const hasExtra = t.hasExtra(i)
    t.setTicket(i, this.ring.push(i, t.state(i) | (hasExtra ? HAS_EXTRA : 0), now))
    t.setJob(i, undefined)
    if (hasExtra) {
      const extra = t.extra(i) as Extras
      extra.pausedReason = undefined
      extra.pauseRequest = undefined
      if (extra.breaker !== undefined) this.leave(i, extra.breaker, now)
    }
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

  // ------------------------------------------------------------------ controls: internals

  private idOf(i: number): TaskId {
    return (this.t.extra(i)?.id ?? formatId(i, this.t.gen(i))) as TaskId
  }

  private emit(o: Occurrence): void {
    this.pendingOccurrences.push(o)
  }

  private ensureExtra(i: number): Extras {
    let extra = this.t.extra(i)
    if (extra === undefined) {
      extra = new Extras()
      extra.gridSlot = this.t.slot(i)
      this.t.setExtra(i, extra)
    }
    return extra
  }

  /** A heap entry died in place (its task left `scheduled`); compacts past half dead. */
  private kill(): void {
    this.dead++
    if (this.dead * 2 > this.heap.size) this.compact()
  }

  private forEachMatch(filter: TaskFilter, f: (i: number) => void): void {
    const state = filter.state === undefined ? -1 : Lifecycle.states.indexOf(filter.state)
    if (filter.state !== undefined && state < 0) return
    for (let i = 0; i < this.top; i++) {
      if (!this.present(i)) continue
      if (state >= 0 && this.t.state(i) !== state) continue
      const extra = this.t.extra(i)
      if (filter.kind !== undefined && (extra?.plan?.kind ?? "once") !== filter.kind) continue
      if (filter.tag !== undefined && !(extra?.tags ?? NO_TAGS).includes(filter.tag)) continue
      f(i)
    }
  }

  private changeAll(filter: TaskFilter, change: (i: number) => boolean): Array<TaskId> {
    const rows: Array<number> = []
    this.forEachMatch(filter, (i) => rows.push(i))
    const out: Array<TaskId> = []
    for (const i of rows) {
      // An earlier change (a breaker released by a cancel, say) may have moved this task on.
      const id = this.idOf(i)
      if (change(i)) out.push(id)
    }
    return out
  }

  /** PAUSE for row `i`: see {@link pause}. */
  private pauseRow(i: number, reason: PauseReason, now: number): boolean {
    const s = this.t.state(i)
    if (s === PAUSED) {
      const extra = this.t.extra(i) as Extras
      if (reason === "manual") extra.pausedReason = "manual"
      return false
    }
    if (s !== SCHEDULED && s !== RUNNING) return false
    const extra = this.ensureExtra(i)
    this.load(i, extra)
    if (Lifecycle.step(s, PAUSE, this.args) === undefined) {
      // Running, with a pause already requested: a pause by hand outranks the breaker's.
      if (reason === "manual") extra.pauseRequest = "manual"
      return false
    }
    if (s === RUNNING) {
      extra.pauseRequest = reason
      return true
    }
    this.t.setState(i, PAUSED)
    this.bump(SCHEDULED, -1)
    this.bump(PAUSED, 1)
    this.kill()
    extra.merged = undefined
    this.hold(i, extra, reason, now)
    const cell = extra.breaker
    if (cell !== undefined && cell.probe === i && cell.probeGen === this.t.gen(i)) {
      // The probe was paused by hand: another held task probes instead.
      cell.probe = -1
      this.pickProbe(cell, now, undefined)
    }
    return true
  }

  /** Row `i` has entered `paused` for `reason`. */
  private hold(i: number, extra: Extras, reason: PauseReason, now: number): void {
    extra.pausedReason = reason
    extra.pausedAt = now
    this.emit({ kind: "paused", id: this.idOf(i), generation: this.t.gen(i), reason, at: now })
  }

  /** RESUME for a paused row `i` at `now`: computes its slot and pushes it. */
  private release(i: number, now: number): void {
    const extra = this.t.extra(i) as Extras
    const reason = extra.pausedReason ?? "manual"
    const r = Rules.resume(this.rowView(i, extra), now)
    extra.consecutiveFailures = r.consecutiveFailures
    extra.pausedReason = undefined
    this.t.setState(i, SCHEDULED)
    this.bump(PAUSED, -1)
    this.bump(SCHEDULED, 1)
    const id = this.idOf(i)
    const g = this.t.gen(i)
    if (r.skipped !== undefined) {
      this.emit({
        kind: "skipped",
        id,
        generation: g,
        cause: reason === "breaker" ? "breaker" : "paused",
        ...r.skipped,
        nextSlot: r.dueAt,
        at: now,
      })
      if (r.resumeFrom >= 0) extra.resumeFrom = r.resumeFrom
    }
    extra.gridSlot = r.slot
    this.t.setSlot(i, r.dueAt)
    this.push(i, r.dueAt)
    this.emit({ kind: "resumed", id, generation: g, reason, nextSlot: r.dueAt, at: now })
  }

  /**
   * The take-time decision (SPEC §3) for a live entry of row `i` due at `slot`, taken at `now`:
   * true when the run is not started — a one-shot past its deadline expired (the task is
   * `failed`), or the row moved to a later slot (skipped by its window, or coalesced) and was
   * pushed back there, so runs due before it still go first (SPEC §4).
   */
  private movedAtTake(
    i: number,
    g: number,
    extra: Extras,
    slot: number,
    now: number,
    limit: number,
  ): boolean {
    const take = Rules.take(this.rowView(i, extra), now, limit, extra.notBefore)
    switch (take._tag) {
      case "Start":
        return false
      case "Expire": {
        this.load(i, extra)
        Lifecycle.step(SCHEDULED, EXPIRE, this.args)
        const expired = Lifecycle.states.indexOf(Rules.expire())
        this.t.setState(i, expired)
        this.bump(SCHEDULED, -1)
        this.bump(expired, 1)
        this.emit({
          kind: "expired",
          id: this.idOf(i),
          generation: g,
          slot: extra.gridSlot,
          scheduledFor: slot,
          attempt: this.t.attempt(i),
          deadline: take.deadline,
          // When the run would have started: a stepping driver is behind the slot it takes.
          at: Math.max(slot, now, extra.notBefore),
        })
        this.finish(i, Math.max(slot, now, extra.notBefore))
        return true
      }
      case "Skip": {
        this.emit({
          kind: "skipped",
          id: this.idOf(i),
          generation: g,
          cause: "window",
          ...take.skipped,
          nextSlot: take.slot,
          at: Math.max(slot, now, extra.notBefore),
        })
        extra.merged = undefined
        break
      }
      case "Coalesce": {
        const merged = take.merged
        extra.merged =
          extra.merged === undefined
            ? merged
            : {
                first: extra.merged.first,
                last: merged.last,
                count: extra.merged.count + merged.count,
                exact: extra.merged.exact && merged.exact,
              }
        break
      }
    }
    extra.gridSlot = take.slot
    this.t.setSlot(i, take.slot)
    this.push(i, take.slot)
    return true
  }

  /** Row `i` as the rules read it, in the reused view (valid until the next call). */
  private rowView(i: number, extra: Extras | undefined): Rules.Row {
    const v = this.view
    const slot = this.t.slot(i)
    v.dueAt = slot
    v.attempt = this.t.attempt(i)
    v.runNumber = this.t.runs(i)
    if (extra === undefined) {
      v.plan = undefined
      v.slot = slot
      v.consecutiveFailures = 0
      v.retry = Retry.none
      v.missedRuns = "catch-up"
      v.pauseAfter = 0
      v.windowMs = NO_WINDOW
      v.pauseRequest = undefined
      v.restart = undefined
      v.resumeFrom = -1
    } else {
      v.plan = extra.plan
      v.slot = extra.gridSlot
      v.consecutiveFailures = extra.consecutiveFailures
      v.retry = extra.retry
      v.missedRuns = extra.missedRuns
      v.pauseAfter = extra.pauseAfter
      v.windowMs = extra.windowMs
      v.pauseRequest = extra.pauseRequest
      v.restart = extra.restart
      v.resumeFrom = extra.resumeFrom
    }
    return v
  }

  // ---- circuit breakers ----

  /** A shared breaker by name, or a validated policy for a task's own breaker. */
  private resolveBreaker(
    option: Breaker.BreakerPolicy | string,
  ): BreakerCell | Breaker.Resolved | InvalidOption {
    if (typeof option === "string") {
      const cell = this.named.get(option)
      return (
        cell ??
        new InvalidOption({
          field: "breaker",
          value: option,
          message: `breaker ${show(option)} is not defined (defined: ${[...this.named.keys()].join(", ") || "none"})`,
        })
      )
    }
    return Breaker.resolve(option)
  }

  /** @internal Whether a failed slot of row `i` opens its breaker (the machine's `breakerOpens`). */
  breakerOpensOnFailure(i: number): boolean {
    const cell = this.t.extra(i)?.breaker
    if (cell === undefined) return false
    const probe = cell.probe === i && cell.probeGen === this.t.gen(i)
    return Breaker.opensOnFailure(cell.status, cell.policy, probe)
  }

  /** Row `i` joins `choice` (a shared breaker, or a policy for its own) and is held if it is open. */
  private join(
    i: number,
    extra: Extras,
    choice: BreakerCell | Breaker.Resolved,
    id: TaskId,
    now: number,
  ): void {
    let cell: BreakerCell
    if (choice instanceof BreakerCell) cell = choice
    else {
      cell = new BreakerCell(id, false, choice)
      this.cells.add(cell)
    }
    cell.members.add(i)
    extra.breaker = cell
    const join = Breaker.onJoin(cell.status.state, cell.probe >= 0, this.t.state(i) === SCHEDULED)
    if (join === "none") return
    if (join === "probe") {
      // A half-open breaker with nothing held to probe: the first task to come is the probe.
      cell.probe = i
      cell.probeGen = this.t.gen(i)
      return
    }
    this.pauseRow(i, "breaker", now)
  }

  /** Row `i` leaves its breaker (it is final, or changed breakers). */
  private leave(i: number, cell: BreakerCell, now: number): void {
    cell.members.delete(i)
    const probe = cell.probe === i && cell.probeGen === this.t.gen(i)
    if (probe) cell.probe = -1
    if (!cell.shared) {
      this.cells.delete(cell)
      if (cell.status.state === "open") this.updateBreakerTimer()
      return
    }
    if (probe && cell.status.state === "half-open") this.pickProbe(cell, now, undefined)
  }

  /** The breaker of row `i` after a run that ended its slot (a run whose retry follows does not). */
  private breakerAfterRun(i: number, cell: BreakerCell, failed: boolean, now: number): void {
    const probe = cell.probe === i && cell.probeGen === this.t.gen(i)
    const before = cell.status
    const after = Breaker.afterSlot(before, cell.policy, probe, failed)
    cell.status = after
    if (after.state === before.state) return
    cell.probe = -1
    const cause = this.idOf(i)
    if (after.state === "open") {
      const { coolDown, halfOpenAt } = Breaker.opening(cell.policy, after.opens, now)
      cell.openedAt = now
      cell.halfOpenAt = halfOpenAt
      this.updateBreakerTimer()
      this.emit({
        kind: "breaker",
        breaker: cell.name,
        from: before.state,
        to: "open",
        coolDown,
        halfOpenAt: cell.halfOpenAt,
        probe: undefined,
        cause,
        at: now,
      })
      for (const m of cell.members) if (m !== i) this.pauseRow(m, "breaker", now)
    } else {
      this.emit({
        kind: "breaker",
        breaker: cell.name,
        from: before.state,
        to: after.state,
        coolDown: undefined,
        halfOpenAt: undefined,
        probe: undefined,
        cause,
        at: now,
      })
      this.releaseMembers(cell, now, i)
    }
  }

  /** Every task its breaker holds is released; pause requests by the breaker are withdrawn. */
  private releaseMembers(cell: BreakerCell, now: number, except: number): void {
    for (const m of [...cell.members]) {
      if (m === except) continue
      const extra = this.t.extra(m) as Extras
      const s = this.t.state(m)
      if (s === PAUSED && extra.pausedReason === "breaker") this.release(m, now)
      else if (s === RUNNING && extra.pauseRequest === "breaker") {
        this.load(m, extra)
        Lifecycle.step(RUNNING, RESUME, this.args)
        extra.pauseRequest = undefined
      }
    }
  }

  /**
   * Open breakers whose cool-down has ended by `at` go half-open and let a probe through. `at`
   * may be ahead of the driver's clock (a stepping driver's takeDue with a later limit): the
   * probe then starts no earlier than `at`.
   */
  private halfOpen(at: number): void {
    for (const cell of this.cells) {
      if (cell.status.state !== "open" || cell.halfOpenAt > at) continue
      cell.status = { ...cell.status, state: "half-open" }
      cell.halfOpenAt = Number.POSITIVE_INFINITY
      this.pickProbe(cell, at, "open")
      if (cell.probe >= 0) (this.t.extra(cell.probe) as Extras).notBefore = at
    }
    this.updateBreakerTimer()
  }

  /**
   * Lets the held task that would run first (earliest resume slot, then priority, then row) through
   * as the half-open breaker's probe; reports the transition `from` → half-open when given.
   */
  private pickProbe(cell: BreakerCell, now: number, from: BreakerState | undefined): void {
    let best = -1
    let bestSlot = 0
    for (const m of cell.members) {
      const extra = this.t.extra(m) as Extras
      if (this.t.state(m) !== PAUSED || extra.pausedReason !== "breaker") continue
      const slot = Rules.resume(this.rowView(m, extra), now).dueAt
      if (
        best < 0 ||
        Breaker.probeBefore(
          { dueAt: slot, rank: this.t.rank(m) },
          { dueAt: bestSlot, rank: this.t.rank(best) },
        )
      ) {
        best = m
        bestSlot = slot
      }
    }
    if (from !== undefined) {
      this.emit({
        kind: "breaker",
        breaker: cell.name,
        from,
        to: "half-open",
        coolDown: undefined,
        halfOpenAt: undefined,
        probe: best < 0 ? undefined : this.idOf(best),
        cause: undefined,
        at: now,
      })
    }
    if (best < 0) return
    cell.probe = best
    cell.probeGen = this.t.gen(best)
    this.release(best, now)
  }

  private updateBreakerTimer(): void {
    let at = Number.POSITIVE_INFINITY
    for (const cell of this.cells) {
      if (cell.status.state === "open" && cell.halfOpenAt < at) at = cell.halfOpenAt
    }
    this.breakerAt = at
  }

  private breakerInfo(cell: BreakerCell): BreakerInfo {
    const tasks: Array<TaskId> = []
    const held: Array<TaskId> = []
    for (const m of cell.members) {
      tasks.push(this.idOf(m))
      if (this.t.state(m) === PAUSED && this.t.extra(m)?.pausedReason === "breaker")
        held.push(this.idOf(m))
    }
    const state = cell.status.state
    return {
      name: cell.name,
      shared: cell.shared,
      state,
      failures: cell.status.failures,
      policy: cell.policy,
      opens: cell.status.opens,
      openedAt: cell.openedAt,
      halfOpenAt: state === "open" ? cell.halfOpenAt : undefined,
      probe: cell.probe < 0 ? undefined : this.idOf(cell.probe),
      tasks,
      held,
    }
  }

  private compact(): void {
    this.heap.compact((i, order) => this.isLive(i, order))
    this.dead = 0
  }

  /**
   * Whether the heap entry of row `i` with order key `order` is live: the row is `scheduled` and
   * this is its latest push. Order keys are unique per push and the row records its latest one,
   * so an entry of an earlier task in the row, or of this task before a pause, a change of
   * priority or a move, fails the comparison: no generation needs to be kept in the entry.
   */
  private isLive(i: number, order: number): boolean {
    return this.t.state(i) === SCHEDULED && this.t.ticket(i) === order
  }

  /**
   * Pushes row `i`'s run at `slot`, with the next sequence number (SPEC §4), and records the
   * entry's order key in the row so that any older entry of the same task is dead. O(log n).
   */
  private push(i: number, slot: number): void {
    const order = this.t.rank(i) * RANK_STRIDE + this.seq++
    this.heap.push(slot, order, i)
    this.t.setTicket(i, order)
  }
}

/** The slot after `slot` if its run took no time: a schedule's own sequence, for previews. */
const following = (plan: Schedule.Plan, slot: number): number | undefined => {
  const next = Schedule.nextAfterRun(plan, "catch-up", slot, slot)
  return next !== undefined && "slot" in next ? next.slot : undefined
}
