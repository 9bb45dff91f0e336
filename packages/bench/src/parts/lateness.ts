/**
 * Part 3: real-clock lateness. For each contender and size, N slots are drawn uniformly (whole
 * ms) over a window that opens `lead` ms after arming starts; the lead covers the arming time
 * measured so far with a margin (see `leadFor`), so every task is armed before the window
 * opens. Each job records `performance.timeOrigin + performance.now()`; lateness = startedAt −
 * slot. A run that starts before its slot is an early start.
 *
 * Each trial's instance is warmed up before its window: with the N tasks it arms
 * {@link WARM_TASKS} more, due over the 200 ms that end 50 ms before the window opens, whose
 * starts are not measured. A warm-up on another instance is not enough: when that instance is
 * collected, V8 discards the optimised code that embedded its objects ("weak objects" in
 * `--trace-deopt`), and the trial's first ~100 ms then ran in unoptimised code while it was
 * compiled again (1M over 5 s: the runtime's p99 34–62 ms that way, 3.8–6.1 ms warmed).
 *
 * On Linux each trial also reads the main thread's scheduler counters (`src/lib/sched.ts`) when
 * the window opens and when its last task starts: its CPU time per started task, and how long it
 * was runnable but waiting for a CPU. A p99 far above the limit's with a long wait is the machine
 * taking the CPU away; with a short wait, it is the contender's own work or its collector.
 */
import type { RealtimeContender } from "../contenders/realtime.ts"
import { Budget, progress } from "../lib/budget.ts"
import { epochNow, quiesce } from "../lib/env.ts"
import { count, fixed, int, ms, spread, table } from "../lib/format.ts"
import { startGcReading } from "../lib/gc.ts"
import { seeded } from "../lib/random.ts"
import { readThreadSched, type ThreadSched } from "../lib/sched.ts"
import { quantile, type Summary, summarize } from "../lib/stats.ts"

export interface LatenessConfig {
  readonly sizes: ReadonlyArray<{ readonly n: number; readonly windowMs: number }>
  readonly reps: number
  readonly seed: number
  readonly contenders: ReadonlyArray<RealtimeContender>
  readonly partBudgetMs: number
}

export interface LatenessTrial {
  readonly rep: number
  readonly armMs: number
  readonly leadMs: number
  /** > 0 when arming ended after the warm-up began, in ms (the trial still counts, flagged). */
  readonly overrunMs: number
  readonly started: number
  readonly missed: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly min: number
  readonly early: number
  readonly earlyShare: number
  /** Share of the window (and grace) spent in garbage collection, 0–1. */
  readonly gcShare: number
  /** JS heap bytes allocated per started task from arming's end to the last start. */
  readonly bytesPerRun: number
  /**
   * The main thread's CPU time from the window's opening to the last start, per started task,
   * in µs; NaN without Linux's schedstat.
   */
  readonly cpuUsPerRun: number
  /**
   * How long the main thread was runnable but waiting for a CPU from the window's opening to the
   * last start, in ms; NaN without Linux's schedstat.
   */
  readonly cpuWaitMs: number
}

export interface LatenessRow {
  readonly key: string
  readonly name: string
  readonly n: number
  readonly windowMs: number
  readonly trials: Array<LatenessTrial>
  skipped?: string | undefined
}

/** Tasks armed (and dropped) once per contender before its trials: JIT warm-up and a first rate. */
const CALIBRATION_TASKS = 20_000

/** Warm-up tasks armed with each trial's tasks, due just before its window (not measured). */
const WARM_TASKS = 20_000
/** The warm-up's span and how long before the window it ends, in ms. */
const WARM_SPAN_MS = 200
const WARM_GAP_MS = 50

/**
 * Arms tasks a minute ahead, then stops them: the arming cost per task, in ms. Then an untimed
 * warm-up: the same number of tasks run over 200 ms, so every contender's run path is optimised
 * before its first timed trial (as part 5 warms each contender up), not only its arming path.
 */
const calibrate = async (c: RealtimeContender): Promise<number> => {
  await quiesce()
  const slots = new Float64Array(CALIBRATION_TASKS).fill(Math.ceil(epochNow()) + 60_000)
  const t0 = performance.now()
  const handle = c.start(slots, () => {})
  const perTask = (performance.now() - t0) / CALIBRATION_TASKS
  handle.stop()
  await quiesce()
  const start = Math.ceil(epochNow()) + 250 + Math.ceil(3 * CALIBRATION_TASKS * perTask)
  for (let k = 0; k < CALIBRATION_TASKS; k++) slots[k] = start + (k % 200)
  let left = CALIBRATION_TASKS
  let warm: () => void = () => {}
  const warmed = new Promise<void>((resolve) => {
    warm = resolve
  })
  const run = c.start(slots, () => {
    if (--left === 0) warm()
  })
  let timer: ReturnType<typeof setTimeout> | undefined
  await Promise.race([
    warmed,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, start - epochNow()) + 5_000)
    }),
  ])
  if (timer !== undefined) clearTimeout(timer)
  run.stop()
  return perTask
}

/**
 * The lead before the window opens: 250 ms plus the expected arming time with a margin: 1.5×
 * when the rate is the slowest one measured at this size, 2× when it comes from a smaller
 * trial size (arming grows faster than linearly once the heap is large), 3× when it comes from
 * the calibration (cold caches and a small heap make that rate optimistic).
 */
const leadFor = (n: number, rate: { readonly n: number; readonly msPerTask: number }): number =>
  Math.ceil(
    250 +
      WARM_SPAN_MS +
      WARM_GAP_MS +
      (rate.n >= n ? 1.5 : rate.n <= CALIBRATION_TASKS ? 3 : 2) * (n + WARM_TASKS) * rate.msPerTask,
  )

/** How long after the window closes a trial waits for tasks that have not started yet. */
const graceFor = (windowMs: number): number => Math.max(2_000, windowMs)

const runTrial = async (
  c: RealtimeContender,
  offsets: Float64Array,
  windowMs: number,
  rep: number,
  leadMs: number,
): Promise<LatenessTrial> => {
  const n = offsets.length
  await quiesce()
  const windowStart = Math.ceil(epochNow()) + leadMs
  // The trial's tasks are 0..n-1; the warm-up's follow them.
  const slots = new Float64Array(n + WARM_TASKS)
  for (let k = 0; k < n; k++) slots[k] = windowStart + (offsets[k] as number)
  const warmFrom = windowStart - WARM_GAP_MS - WARM_SPAN_MS
  for (let k = 0; k < WARM_TASKS; k++) slots[n + k] = warmFrom + (k % WARM_SPAN_MS)
  const startedAt = new Float64Array(n).fill(Number.NaN)
  let started = 0
  let finish: () => void = () => {}
  const done = new Promise<void>((resolve) => {
    finish = resolve
  })
  let warmed = 0
  /** The main thread's counters when the window opened and when its last task started. */
  let schedOpen: ThreadSched | undefined
  let schedLast: ThreadSched | undefined
  const onStart = (k: number): void => {
    if (k >= n) {
      warmed++
      return
    }
    startedAt[k] = epochNow()
    if (++started === n) {
      schedLast = readThreadSched()
      finish()
    }
  }
  const t0 = performance.now()
  const handle = c.start(slots, onStart)
  const armMs = performance.now() - t0
  // Arming that ends after the warm-up began leaves warm-up runs (and maybe the window's) late.
  const overrunMs = Math.max(0, epochNow() - warmFrom)
  const graceMs = graceFor(windowMs)
  const gc = startGcReading()
  // Read on the main thread at the window's opening (a timer late by a few ms shifts the
  // stretch, not its meaning); a window that never opened before the end reads nothing.
  const openTimer = setTimeout(
    () => {
      schedOpen = readThreadSched()
    },
    Math.max(0, windowStart - epochNow()),
  )
  let timer: ReturnType<typeof setTimeout> | undefined
  await Promise.race([
    done,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, windowStart + windowMs + graceMs - epochNow()))
    }),
  ])
  if (timer !== undefined) clearTimeout(timer)
  clearTimeout(openTimer)
  // Cut off before every task started: the stretch ends now.
  if (schedLast === undefined) schedLast = readThreadSched()
  const reading = gc.stop()
  handle.stop()
  const lateness = new Float64Array(started)
  let j = 0
  let early = 0
  for (let k = 0; k < n; k++) {
    const s = startedAt[k] as number
    if (Number.isNaN(s)) continue
    const l = s - (slots[k] as number)
    if (l < 0) early++
    lateness[j++] = l
  }
  lateness.sort()
  return {
    rep,
    armMs,
    leadMs,
    overrunMs,
    started,
    missed: n - started,
    p50: quantile(lateness, 0.5),
    p99: quantile(lateness, 0.99),
    max: lateness.length > 0 ? (lateness[lateness.length - 1] as number) : Number.NaN,
    min: lateness.length > 0 ? (lateness[0] as number) : Number.NaN,
    early,
    earlyShare: early / Math.max(1, started),
    gcShare: reading.gcShare,
    // The reading began when arming ended, so it includes the warm-up's runs.
    bytesPerRun: reading.allocatedBytes / Math.max(1, started + warmed),
    ...schedStretch(schedOpen, schedLast, started),
  }
}

/** CPU time per started task (µs) and the wait for a CPU (ms) between two readings. */
const schedStretch = (
  open: ThreadSched | undefined,
  last: ThreadSched | undefined,
  started: number,
): { cpuUsPerRun: number; cpuWaitMs: number } =>
  open === undefined || last === undefined || started === 0
    ? { cpuUsPerRun: Number.NaN, cpuWaitMs: Number.NaN }
    : {
        cpuUsPerRun: ((last.onCpuMs - open.onCpuMs) * 1000) / started,
        cpuWaitMs: last.waitMs - open.waitMs,
      }

/** One contender at one size, with the reps the part budget still allows it. */
interface Plan {
  readonly c: RealtimeContender
  readonly n: number
  readonly windowMs: number
  readonly row: LatenessRow
  planned: number
  /** Wall time of its last trial. */
  lastMs?: number
}

/**
 * Runs the trials. Before each one, the reps still to run are re-planned against the part
 * budget: while they would not fit, the most expensive remaining trial is dropped first, so
 * the cheap rows keep all their reps and an expensive row (1M fibers) loses reps, saying so.
 */
export const runLateness = async (config: LatenessConfig): Promise<Array<LatenessRow>> => {
  const budget = new Budget(config.partBudgetMs)
  /** The latest arming rate per contender, and the size it was measured at. */
  const rates = new Map<string, { n: number; msPerTask: number }>()
  for (const c of config.contenders) {
    rates.set(c.key, { n: CALIBRATION_TASKS, msPerTask: await calibrate(c) })
  }
  const rateOf = (c: RealtimeContender) => rates.get(c.key) as { n: number; msPerTask: number }
  const plans: Array<Plan> = config.sizes.flatMap(({ n, windowMs }) =>
    config.contenders.map((c) => ({
      c,
      n,
      windowMs,
      row: { key: c.key, name: c.name, n, windowMs, trials: [] },
      planned: config.reps,
    })),
  )
  const expected = (p: Plan): number =>
    p.lastMs ?? p.n * 0.002 + leadFor(p.n, rateOf(p.c)) + p.windowMs + 1_000
  const replan = (): void => {
    for (const p of plans) p.planned = config.reps
    for (;;) {
      let left = 0
      let worst: Plan | undefined
      for (const p of plans) {
        const todo = p.planned - p.row.trials.length
        if (todo <= 0) continue
        left += todo * expected(p)
        if (worst === undefined || expected(p) > expected(worst)) worst = p
      }
      if (worst === undefined || left <= budget.remaining()) return
      worst.planned--
    }
  }
  for (const { n, windowMs } of config.sizes) {
    const rng = seeded(config.seed ^ n ^ 0x5eed)
    const offsets = new Float64Array(n)
    for (let k = 0; k < n; k++) offsets[k] = Math.floor(rng() * windowMs)
    const sizePlans = plans.filter((p) => p.n === n)
    for (let rep = 0; rep < config.reps; rep++) {
      for (const p of sizePlans) {
        replan()
        if (p.row.trials.length >= p.planned) continue
        const c = p.c
        const leadMs = leadFor(n, rateOf(c))
        // The worst case must fit: collections, the lead (arming happens within it), the
        // window and the whole grace period after it.
        if (!budget.fits(n * 0.002 + leadMs + windowMs + graceFor(windowMs))) {
          p.planned = p.row.trials.length
          continue
        }
        const t0 = performance.now()
        const trial = await runTrial(c, offsets, windowMs, rep + 1, leadMs)
        p.lastMs = performance.now() - t0
        // Keep the slowest arming seen at this size: it varies with the collector's work.
        const seen = rateOf(c)
        const msPerTask = trial.armMs / n
        rates.set(c.key, {
          n,
          msPerTask: seen.n === n ? Math.max(seen.msPerTask, msPerTask) : msPerTask,
        })
        p.row.trials.push(trial)
        progress(
          `${count(n)} rep ${rep + 1} ${c.name}: p50 ${ms(trial.p50)} p99 ${ms(trial.p99)} max ${ms(trial.max)} ms, early ${int(trial.early)}, missed ${int(trial.missed)}, armed in ${ms(trial.armMs)} ms, CPU ${fixed(trial.cpuUsPerRun, 2)} µs/run, waited for a CPU ${ms(trial.cpuWaitMs)} ms${trial.overrunMs > 0 ? `, the warm-up began ${ms(trial.overrunMs)} ms before arming ended` : ""} [${(p.lastMs / 1000).toFixed(1)} s]`,
        )
      }
    }
    for (const p of sizePlans) {
      const done = p.row.trials.length
      if (done < config.reps) {
        p.row.skipped = `${done} of ${config.reps} reps: more would pass the ${Math.round(config.partBudgetMs / 1000)} s part budget (${fixed(expected(p) / 1000, 1)} s a rep)`
        progress(`${count(n)} ${p.c.name}: ${p.row.skipped}`)
      }
    }
  }
  return plans.map((p) => p.row)
}

export interface LatenessSummary {
  readonly key: string
  readonly name: string
  readonly n: number
  readonly windowMs: number
  readonly p50: Summary
  readonly p99: Summary
  readonly max: Summary
  readonly early: Summary
  readonly earlyShare: Summary
  readonly min: Summary
  readonly armMs: Summary
  readonly gcShare: Summary
  readonly bytesPerRun: Summary
  readonly cpuUsPerRun: Summary
  readonly cpuWaitMs: Summary
  readonly missed: number
  readonly overruns: number
  readonly skipped?: string | undefined
}

export const summarizeLateness = (rows: ReadonlyArray<LatenessRow>): Array<LatenessSummary> =>
  rows.map((r) => {
    const pick = (f: (t: LatenessTrial) => number) => summarize(r.trials.map(f))
    return {
      key: r.key,
      name: r.name,
      n: r.n,
      windowMs: r.windowMs,
      p50: pick((t) => t.p50),
      p99: pick((t) => t.p99),
      max: pick((t) => t.max),
      early: pick((t) => t.early),
      earlyShare: pick((t) => t.earlyShare),
      min: pick((t) => t.min),
      armMs: pick((t) => t.armMs),
      gcShare: pick((t) => t.gcShare),
      bytesPerRun: pick((t) => t.bytesPerRun),
      cpuUsPerRun: pick((t) => t.cpuUsPerRun),
      cpuWaitMs: pick((t) => t.cpuWaitMs),
      missed: r.trials.reduce((a, t) => a + t.missed, 0),
      overruns: r.trials.filter((t) => t.overrunMs > 0).length,
      skipped: r.skipped,
    }
  })

const pct = (x: number): string => `${fixed(x * 100, x < 0.001 ? 3 : 1)}%`

export const latenessTable = (summaries: ReadonlyArray<LatenessSummary>): string =>
  table(
    [
      { title: "contender", align: "left" },
      { title: "tasks / window" },
      { title: "p50 ms" },
      { title: "p99 ms" },
      { title: "max ms" },
      { title: "early starts (share)" },
      { title: "earliest ms" },
      { title: "arm ms" },
      { title: "GC %" },
      { title: "B/run" },
      { title: "CPU µs/run" },
      { title: "CPU wait ms" },
      { title: "note", align: "left" },
    ],
    summaries.map((s) => {
      const has = s.p50.values.length > 0
      const notes: Array<string> = []
      if (s.missed > 0) notes.push(`${int(s.missed)} never started in the window + grace`)
      if (s.overruns > 0) notes.push(`${s.overruns} reps armed past the warm-up's start`)
      if (s.skipped !== undefined) notes.push(s.skipped)
      else if (s.p50.values.length < 3) notes.push(`${s.p50.values.length} reps`)
      return [
        s.name,
        `${count(s.n)} / ${fixed(s.windowMs / 1000, 0)} s`,
        has ? spread(s.p50, ms) : "–",
        has ? spread(s.p99, ms) : "–",
        has ? spread(s.max, ms) : "–",
        has ? `${spread(s.early, int)} (${pct(s.earlyShare.median)})` : "–",
        has ? ms(s.min.median) : "–",
        has ? ms(s.armMs.median) : "–",
        has ? fixed(s.gcShare.median * 100, 1) : "–",
        has ? fixed(s.bytesPerRun.median, 0) : "–",
        has ? fixed(s.cpuUsPerRun.median, 2) : "–",
        has ? spread(s.cpuWaitMs, ms) : "–",
        notes.join("; "),
      ]
    }),
  )
