/**
 * The recorder: the one place that turns what happened to a task — a run started, a run
 * finished, a task accepted or cancelled — into ledger records, the occurrence stream, metrics
 * and the listener's calls (inspection). The timing actor calls it; nothing else records.
 *
 * Listener calls are isolated: a listener that throws is logged once per callback (with its
 * origin and the error) and counted in {@link Recorder.listenerErrors}; it never breaks the
 * actor, and later calls still go to it.
 *
 * @since 0.1.0
 */
import { Rules, Task } from "@tickwork/core"
import { type Context, Effect, PubSub, Stream } from "effect"
import { addGaugeSource, type GaugeSource, type Series, seriesFor } from "./internal/series.ts"
import * as Ledger from "./Ledger.ts"
import * as Metrics from "./Metrics.ts"

/**
 * The options a task was accepted with, as a listener sees them.
 *
 * @category models
 * @since 0.1.0
 */
export interface AcceptedOptions {
  readonly schedule: unknown
  readonly priority?: Task.Priority | undefined
  readonly retry?: { readonly maxRetries?: number } | undefined
  readonly missedRuns?: string | undefined
  readonly pauseAfterConsecutiveFailures?: number | undefined
}

/**
 * What an observer of a scheduler hears, in the order things happen. Each callback runs inside
 * the timing actor's synchronous step: it should be quick. One that throws is logged and
 * counted, and changes nothing.
 *
 * @category models
 * @since 0.1.0
 */
export interface Listener {
  /** A task was accepted; `options` are the schedule options it was given (job included). */
  readonly accepted?: (id: Task.TaskId, info: Task.TaskInfo, options: AcceptedOptions) => void
  readonly started?: (run: Task.RunInfo) => void
  readonly completed?: (record: Task.RunRecord) => void
  readonly cancelled?: (occurrence: Ledger.Cancelled) => void
  /** A control occurrence: skipped slots, an expired one-shot, a pause, a resume, a breaker transition. */
  readonly occurred?: (occurrence: Task.Occurrence) => void
}

type Callback = keyof Listener

/**
 * Records occurrences for one scheduler.
 *
 * @category models
 * @since 0.1.0
 */
export class Recorder {
  readonly ledger: Ledger.Store
  readonly occurrences: PubSub.PubSub<Ledger.StreamItem>
  /** Listener calls that threw. */
  listenerErrors = 0
  /**
   * Streams reading {@link occurrences} now. Nothing is published while there are none: a
   * publish to a PubSub nobody reads still costs ~0.15 µs per record.
   */
  subscribers = 0
  private readonly listener: Listener | undefined
  /** The series every run moves, counted here and read when metrics are snapshotted. */
  private readonly series: Series<Metrics.OutcomeKind>
  /** This scheduler's part of its name's gauges (pending, in flight, tasks by state). */
  private readonly gaugeSource: GaugeSource = { pending: 0, running: 0, states: undefined }
  /** Takes {@link gaugeSource} out of the gauges: called when the scheduler closes. */
  readonly closeGauges: () => void
  /** The scheduler's services: the metric registry and the logger the records go to. */
  private readonly context: Context.Context<never>
  /** Callbacks that have thrown already (each is logged once). */
  private readonly logged = new Set<Callback>()
  /**
   * When each row's task (its current generation) was accepted, epoch ms, by kernel row: a run
   * due before it counts its lateness from it (SPEC §6.8). Grown with the task table.
   */
  private acceptedAt = new Float64Array(0)
  /**
   * The latest time any task was accepted, epoch ms. A run due at or after it was due after its
   * own task's acceptance, so its lateness counts from its due time and {@link acceptedAt} is not
   * read: that read is a cache miss per run (runs visit rows in slot order), ~0.15 µs of a run.
   */
  private latestAccepted = Number.NEGATIVE_INFINITY
  /**
   * The sum of the scheduler's re-anchoring steps so far, ms: {@link acceptedAt} holds each time
   * less the sum at its writing, so that a wall-clock step moves every acceptance time at once.
   */
  private shifted = 0

  constructor(options: {
    readonly ledger: Ledger.Store
    readonly occurrences: PubSub.PubSub<Ledger.StreamItem>
    readonly listener: Listener | undefined
    readonly metrics: Metrics.SchedulerMetrics
    readonly context: Context.Context<never>
    /** The scheduler's tasks by state, read when metrics are snapshotted. */
    readonly states?: (() => Readonly<Record<Task.TaskState, number>>) | undefined
    /** Due runs waiting on a limit by cause (SPEC §20), read when metrics are snapshotted. */
    readonly waiting?: (() => Readonly<Record<"concurrency" | "rate-limited", number>>) | undefined
  }) {
    this.ledger = options.ledger
    this.occurrences = options.occurrences
    this.listener = options.listener
    this.context = options.context
    this.series = seriesFor(options.metrics, options.context, Metrics.secondsBoundaries)
    this.gaugeSource.states = options.states
    this.gaugeSource.waiting = options.waiting
    this.closeGauges = addGaugeSource(options.metrics, options.context, this.gaugeSource)
  }

  /** Whether anyone hears of accepted tasks: when not, the caller skips building what they would hear. */
  get hearsAccepted(): boolean {
    return this.listener?.accepted !== undefined
  }

  /** The task on kernel row `row` was accepted at `at` (epoch ms); O(1) but when the table grows. */
  acceptedOn(row: number, at: number): void {
    if (row >= this.acceptedAt.length) {
      // Rows are taken one past the last at most, so any of these sizes fits `row`.
      // Stryker disable next-line ArithmeticOperator: equivalent, still fits row (growth rate only)
      const grown = new Float64Array(Math.max(64, row + 1, this.acceptedAt.length * 2))
      grown.set(this.acceptedAt)
      this.acceptedAt = grown
    }
    this.acceptedAt[row] = at - this.shifted
    if (at > this.latestAccepted) this.latestAccepted = at
  }

  /**
   * The scheduler's time moved by `delta` ms onto a stepped wall clock (SPEC §2): acceptance
   * times move with it, so a run's lateness still counts from its acceptance (SPEC §6.8), not
   * from before the step. O(1).
   */
  shift(delta: number): void {
    this.shifted += delta
    this.latestAccepted += delta
  }

  /** A task was accepted. */
  accepted(id: Task.TaskId, info: () => Task.TaskInfo, options: AcceptedOptions): void {
    // Stryker disable next-line OptionalChaining: equivalent, called only when hearsAccepted
    const f = this.listener?.accepted
    // Stryker disable next-line ConditionalExpression: equivalent, called only when hearsAccepted
    if (f !== undefined) this.call("accepted", () => f.call(this.listener, id, info(), options))
  }

  /**
   * The run on kernel row `row` started: its lateness (SPEC §6.8) is measured now, except a
   * manual run's (SPEC §19.1): it was not scheduled, so its wait says nothing about the scheduler.
   */
  started(run: Task.RunInfo, row: number): void {
    const acceptedAt =
      run.scheduledFor >= this.latestAccepted
        ? Number.NEGATIVE_INFINITY
        : (this.acceptedAt[row] ?? Number.NEGATIVE_INFINITY) + this.shifted
    const late = Task.countedLateness(run, acceptedAt)
    if (late !== undefined) this.series.lateness.add(late / 1000)
    const f = this.listener?.started
    if (f !== undefined) this.call("started", () => f.call(this.listener, run))
  }

  /**
   * A run finished and the kernel applied it (`record`): its records, in order — slots merged
   * into it before it started, the run, slots its policy dropped when it ended — and its metrics.
   * `row` is the task's kernel row; `named` says its id was given by the caller; `keepResult`
   * is the bound of a value the ledger keeps (a task with `keepResult`), if any. `record` may
   * be the kernel's reused buffer: whatever keeps it (the ledger, the stream, a listener) gets
   * a copy.
   */
  finished(row: number, record: Task.RunRecord, named: boolean, keepResult?: number): void {
    const series = this.series
    series.ran(record.outcome.kind)
    series.duration.add((record.finishedAt - record.startedAt) / 1000)
    Metrics.countRetry(series, record.continuation)
    if (record.merged !== undefined) {
      const merged = Ledger.merged(record, record.merged)
      Metrics.countMissed(series, merged)
      this.add(row, merged, false)
    }
    this.ledger.addRun(row, record, named, keepResult)
    const l = this.listener
    // One copy for the stream and the listener, made only when one of them is there.
    const kept =
      this.subscribers > 0 || l?.completed !== undefined ? Rules.copyRecord(record) : record
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, no reader no record
    if (this.subscribers > 0) PubSub.publishUnsafe(this.occurrences, Ledger.ran(kept))
    if (record.dropped !== undefined) {
      const missed = Ledger.missed(record, record.dropped)
      Metrics.countMissed(series, missed)
      this.add(row, missed, false)
    }
    const f = l?.completed
    if (f !== undefined) this.call("completed", () => f.call(l, kept))
  }

  /** A task was cancelled (from `scheduled` or `running`). */
  cancelled(row: number, occurrence: Ledger.Cancelled): void {
    this.add(row, occurrence, true)
    const f = this.listener?.cancelled
    if (f !== undefined) this.call("cancelled", () => f.call(this.listener, occurrence))
  }

  /** A live task was changed in place (`update`, `ensure`). */
  updated(row: number, occurrence: Ledger.Updated): void {
    this.add(row, occurrence, false)
  }

  /**
   * The kernel's control occurrences of one step, in order: each task's goes to its ledger (an
   * expired one-shot's is its last), a breaker's to the stream only. `rowOf` finds a task's row.
   */
  occurred(list: ReadonlyArray<Task.Occurrence>, rowOf: (id: string) => number): void {
    const l = this.listener
    const f = l?.occurred
    for (const o of list) {
      // Stryker disable next-line StringLiteral: equivalent, a breaker has no id: rowOf gives -1, kept nowhere
      if (o.kind === "breaker") {
        // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, no reader no record
        if (this.subscribers > 0) PubSub.publishUnsafe(this.occurrences, o)
      } else {
        if (o.kind === "skipped") Metrics.countMissed(this.series, o)
        else if (o.kind === "deduplicated") this.series.deduplicated(o.result)
        this.add(rowOf(o.id), o, o.kind === "expired")
      }
      if (f !== undefined) this.call("occurred", () => f.call(l, o))
    }
  }

  /** Sets the pending and in-flight gauges. */
  gauges(pending: number, inFlight: number): void {
    this.gaugeSource.pending = pending
    this.gaugeSource.running = inFlight
  }

  /** The occurrence stream: counts itself among the {@link subscribers} while it is read. */
  stream(): Stream.Stream<Ledger.StreamItem> {
    return Stream.unwrap(
      Effect.as(
        Effect.acquireRelease(
          Effect.sync(() => {
            this.subscribers++
          }),
          () =>
            // Stryker disable next-line BlockStatement: equivalent, no reader no record
            Effect.sync(() => {
              // Stryker disable next-line UpdateOperator: equivalent, no reader no record
              this.subscribers--
            }),
        ),
        Stream.fromPubSub(this.occurrences),
      ),
    )
  }

  private add(row: number, occurrence: Ledger.Occurrence, final: boolean): void {
    this.ledger.add(row, occurrence, final)
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, no reader no record
    if (this.subscribers > 0) PubSub.publishUnsafe(this.occurrences, occurrence)
  }

  private call(origin: Callback, f: () => void): void {
    try {
      f()
    } catch (error) {
      this.listenerErrors++
      if (this.logged.has(origin)) return
      this.logged.add(origin)
      Effect.runForkWith(this.context)(
        Effect.logError(
          `tickwork listener.${origin} threw; the scheduler carries on (logged once per callback)`,
          error,
        ),
      )
    }
  }
}
