/**
 * @internal
 * The per-run metric series, counted in plain fields and read when metrics are snapshotted.
 *
 * Pushing a value with `Metric.updateUnsafe` looks the series up in the registry of the given
 * context on every call: three updates per run cost ~0.4 µs, a fifth of a whole run in a
 * burst. The series here are registered once with `Metric.registerUnsafe`, whose `get` hook
 * builds the same state Effect's own counter, gauge and histogram would hold (same names,
 * attributes, boundaries and state shape); a run only bumps a field and a bucket.
 *
 * Schedulers with one name in one registry share their series, as pushed updates did: a
 * scheduler made again after another of its name closed goes on counting where it stopped.
 *
 * This module knows the metrics only by the shape below, so it does not import `Metrics.ts`
 * (which builds its `runSeries` on it): the dependency points one way.
 */
import type { Task } from "@tickwork/core"
import { Context, Metric } from "effect"

/** The `policy` attribute of missed slots (`Metrics.MissedPolicy`). */
type MissedPolicy = "coalesce" | "skip"

/**
 * The metrics a `Series` is read through, with their attributes bound: `Metrics.SchedulerMetrics`
 * satisfies it. `K` is the outcome kinds (`Metrics.OutcomeKind`).
 */
export interface SeriesMetrics<K extends string> {
  readonly name: string
  readonly lateness: Metric.Histogram<number>
  readonly duration: Metric.Histogram<number>
  readonly runs: Readonly<Record<K, Metric.Counter<number>>>
  readonly pending: Metric.Gauge<number>
  readonly running: Metric.Gauge<number>
  /** The handler the per-run series are of (their `handler` attribute). */
  readonly handler: string
  readonly retries: Metric.Counter<number>
  readonly slotsMissed: (cause: string, policy: MissedPolicy) => Metric.Counter<number>
  readonly tasks: (state: Task.TaskState) => Metric.Gauge<number>
  /** The series of due runs waiting on a limit for `cause` (SPEC §20); absent: not reported. */
  readonly waiting?: ((cause: WaitCause) => Metric.Gauge<number>) | undefined
  /** The series of schedules deduplicated with `outcome` (SPEC §20.3); absent: not reported. */
  readonly deduplicated?: ((outcome: DedupOutcome) => Metric.Counter<number>) | undefined
}

/** What a schedule under a deduplication key did instead of creating a task (SPEC §20.3). */
type DedupOutcome = "deduplicated" | "replaced"

/** Why a due run waits on a limit (SPEC §20): the `cause` attribute of `tickwork_runs_waiting`. */
type WaitCause = "concurrency" | "rate-limited"
const waitCauses: ReadonlyArray<WaitCause> = ["concurrency", "rate-limited"]

const none = (): void => {}

/** A histogram's buckets and moments, kept as `Metric.histogram` keeps them. */
class Histogram {
  /** Registers the series: called on the first value, when a pushed histogram would appear. */
  onFirst: () => void = none
  /** Sorted upper bounds, and the count of values at or below each (the last: above all). */
  private readonly bounds: Float64Array
  private readonly counts: Float64Array
  private count = 0
  private sum = 0
  private min = Number.MAX_VALUE
  private max = -Number.MAX_VALUE

  constructor(boundaries: ReadonlyArray<number>) {
    this.bounds = Float64Array.from([...boundaries].sort((a, b) => a - b))
    this.counts = new Float64Array(this.bounds.length + 1)
  }

  /** O(buckets below the value): most values (lateness, duration) fall in the first few. */
  add(value: number): void {
    const bounds = this.bounds
    let k = 0
    while (k < bounds.length && value > (bounds[k] as number)) k++
    this.counts[k] = (this.counts[k] as number) + 1
    if (this.count++ === 0) this.onFirst()
    this.sum += value
    if (value < this.min) this.min = value
    if (value > this.max) this.max = value
  }

  /** The state `Metric.histogram` reports: cumulative counts per upper bound. */
  state(): Metric.HistogramState {
    const buckets: Array<[number, number]> = new Array(this.bounds.length)
    let cumulated = 0
    for (let k = 0; k < this.bounds.length; k++) {
      cumulated += this.counts[k] as number
      buckets[k] = [this.bounds[k] as number, cumulated]
    }
    return { buckets, count: this.count, min: this.min, max: this.max, sum: this.sum }
  }
}

/**
 * One scheduler's contribution to its name's gauges: a gauge reads the sum over the sources
 * alive under that name (an in-memory scheduler and a durable one beside it, say). `pending`
 * and `running` are set by their owner; `states`, when there, is read at each snapshot.
 */
export interface GaugeSource {
  pending: number
  running: number
  states: (() => Readonly<Record<Task.TaskState, number>>) | undefined
  /** Due runs waiting on a limit by cause (SPEC §20), read at each snapshot, when there. */
  waiting?: (() => Readonly<Record<WaitCause, number>>) | undefined
}

/** The task states the `tickwork_tasks` gauge reports, one series each. */
const states: ReadonlyArray<Task.TaskState> = [
  "scheduled",
  "running",
  "paused",
  "done",
  "failed",
  "cancelled",
]

/** The series a run moves, of one scheduler name and handler in one registry. */
export class Series<K extends string> {
  readonly lateness: Histogram
  readonly duration: Histogram
  /** Runs ended with each outcome kind; every kind starts at 0. */
  readonly runs: Record<K, number>
  retries = 0
  /** Slots missed by `cause/policy`: at most 6 causes × 2 policies. */
  readonly missedBy = new Map<string, { count: number }>()
  /** Registers the series of an outcome: on its first run, when a pushed counter would appear. */
  onFirstRun: (kind: K) => void = none
  /** Registers the retries series: on the first retry. */
  onFirstRetry: () => void = none
  /** Registers the series of slots missed for `cause` under `policy`, returning its cell. */
  onFirstMissed: (cause: string, policy: MissedPolicy) => { count: number } = () => ({ count: 0 })
  /** Schedules deduplicated by outcome (SPEC §20.3): two series at most. */
  readonly deduplicatedBy = { deduplicated: 0, replaced: 0 }
  /** Registers the series of schedules deduplicated with `outcome`: on the first of them. */
  onFirstDeduplicated: (outcome: DedupOutcome) => void = none

  constructor(kinds: ReadonlyArray<K>, boundaries: ReadonlyArray<number>) {
    this.runs = Object.fromEntries(kinds.map((kind) => [kind, 0])) as Record<K, number>
    this.lateness = new Histogram(boundaries)
    this.duration = new Histogram(boundaries)
  }

  /** Counts a run that ended with `kind`. */
  ran(kind: K): void {
    if (this.runs[kind]++ === 0) this.onFirstRun(kind)
  }

  /** Counts a failed run followed by a retry of its slot. */
  retried(): void {
    if (this.retries++ === 0) this.onFirstRetry()
  }

  /** Counts a schedule under a deduplication key that created no task (SPEC §20.3). */
  deduplicated(outcome: DedupOutcome): void {
    if (this.deduplicatedBy[outcome]++ === 0) this.onFirstDeduplicated(outcome)
  }

  /** Counts `count` slots missed for `cause` under `policy`. */
  missed(cause: string, policy: MissedPolicy, count: number): void {
    const key = `${cause}/${policy}`
    let cell = this.missedBy.get(key)
    if (cell === undefined) {
      cell = this.onFirstMissed(cause, policy)
      this.missedBy.set(key, cell)
    }
    cell.count += count
  }
}

/** The gauges of one scheduler name in one registry: the sum over its live sources. */
class Gauges {
  readonly sources = new Set<GaugeSource>()

  sum(read: (source: GaugeSource) => number): number {
    let total = 0
    for (const source of this.sources) total += read(source)
    return total
  }

  /** Tasks in `state`, over the sources that count states. */
  inState(state: Task.TaskState): number {
    let total = 0
    for (const source of this.sources) {
      const counts = source.states?.()
      if (counts !== undefined) total += counts[state]
    }
    return total
  }
}

/**
 * Series by registry (the default one is shared), then by scheduler name, handler and context
 * attributes. Held as `Series<never>` (any set of kinds); each is read back with the kinds it
 * was made with.
 */
const registries = new WeakMap<object, Map<string, Series<never>>>()
/** Gauges by registry, then by scheduler name and context attributes. */
const gaugeRegistries = new WeakMap<object, Map<string, Gauges>>()

const register = <I, S>(
  metric: Metric.Metric<I, S>,
  context: Context.Context<never>,
  get: () => S,
): void => {
  Metric.registerUnsafe(metric, context, { get, update: none, modify: none })
}

/**
 * Adds `source` to the gauges of the scheduler whose metrics are `metrics`, in the registry of
 * `context` (registering the gauges there on first use); returns what removes it again.
 */
export const addGaugeSource = <K extends string>(
  metrics: SeriesMetrics<K>,
  context: Context.Context<never>,
  source: GaugeSource,
): (() => void) => {
  const registry = Context.get(context, Metric.MetricRegistry)
  const extra = Context.get(context, Metric.CurrentMetricAttributes)
  let byName = gaugeRegistries.get(registry)
  if (byName === undefined) {
    byName = new Map()
    gaugeRegistries.set(registry, byName)
  }
  const key = `${metrics.name}\u0000${JSON.stringify(extra)}`
  let gauges = byName.get(key)
  if (gauges === undefined) {
    const g = new Gauges()
    gauges = g
    byName.set(key, g)
    register(metrics.pending, context, () => ({ value: g.sum((s) => s.pending) }))
    register(metrics.running, context, () => ({ value: g.sum((s) => s.running) }))
    for (const state of states) {
      register(metrics.tasks(state), context, () => ({ value: g.inState(state) }))
    }
    const waiting = metrics.waiting
    if (waiting !== undefined) {
      for (const cause of waitCauses) {
        register(waiting(cause), context, () => ({
          value: g.sum((s) => s.waiting?.()[cause] ?? 0),
        }))
      }
    }
  }
  const target = gauges
  target.sources.add(source)
  return () => {
    target.sources.delete(source)
  }
}

/**
 * The series of the scheduler whose metrics are `metrics`, in the registry of `context`:
 * registered there on first use, and shared by every scheduler of that name after.
 */
export const seriesFor = <K extends string>(
  metrics: SeriesMetrics<K>,
  context: Context.Context<never>,
  boundaries: ReadonlyArray<number>,
): Series<K> => {
  const registry = Context.get(context, Metric.MetricRegistry)
  const extra = Context.get(context, Metric.CurrentMetricAttributes)
  let byName = registries.get(registry)
  if (byName === undefined) {
    byName = new Map()
    registries.set(registry, byName)
  }
  const key = `${metrics.name}\u0000${metrics.handler}\u0000${JSON.stringify(extra)}`
  const known = byName.get(key)
  // One name in one registry has one set of metrics, so one set of outcome kinds.
  if (known !== undefined) return known as Series<K>
  const series = new Series<K>(Object.keys(metrics.runs) as Array<K>, boundaries)
  byName.set(key, series)
  // Each series appears when its first value comes, as a pushed one does: an exporter sees no
  // empty histogram and no outcome that never happened.
  series.lateness.onFirst = () => register(metrics.lateness, context, () => series.lateness.state())
  series.duration.onFirst = () => register(metrics.duration, context, () => series.duration.state())
  series.onFirstRun = (kind) =>
    register(metrics.runs[kind], context, () => ({
      count: series.runs[kind],
      incremental: true,
    }))
  series.onFirstRetry = () =>
    register(metrics.retries, context, () => ({ count: series.retries, incremental: true }))
  series.onFirstMissed = (cause, policy) => {
    const cell = { count: 0 }
    register(metrics.slotsMissed(cause, policy), context, () => ({
      count: cell.count,
      incremental: true,
    }))
    return cell
  }
  const deduplicated = metrics.deduplicated
  if (deduplicated !== undefined) {
    series.onFirstDeduplicated = (outcome) =>
      register(deduplicated(outcome), context, () => ({
        count: series.deduplicatedBy[outcome],
        incremental: true,
      }))
  }
  return series
}
