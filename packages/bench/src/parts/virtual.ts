/**
 * Parts 1 and 2: N one-shot no-op tasks in virtual time, one trial per contender, size and rep.
 *
 * - Part 1 (`throughput`): collect → create → schedule all N (timed) → run them all (timed),
 *   with nothing in between, so garbage left by scheduling is paid for where it arises.
 * - Part 2 (`memory`): collect, read the baseline → create → schedule all N → collect, read
 *   heapUsed + arrayBuffers → close (the instance stays referenced until the reading).
 *
 * Reps are interleaved (rep 1 of every contender, then rep 2, …) so drifting machine load
 * spreads over all rows. Each contender first runs one untimed warm-up trial. A bounded
 * contender that is cut off is not repeated at that size and not tried at larger ones.
 */
import type { VirtualContender, Workload } from "../contenders/virtual.ts"
import { noop } from "../contenders/virtual.ts"
import { Budget, progress } from "../lib/budget.ts"
import { quiesce, retainedBytes } from "../lib/env.ts"
import { bytes, count, fixed, int, ms, rate, ratio, spread, table } from "../lib/format.ts"
import { seeded, uniformInts } from "../lib/random.ts"
import { type Summary, summarize } from "../lib/stats.ts"

export interface VirtualConfig {
  readonly sizes: ReadonlyArray<number>
  readonly reps: number
  readonly seed: number
  readonly contenders: ReadonlyArray<VirtualContender>
  /** Delays are uniform integers in [0, delayRangeMs). */
  readonly delayRangeMs: number
  /** Per-trial time budget of a bounded contender (the timed phases). */
  readonly cutOffMs: number
  /** Wall-clock budget of the whole part. */
  readonly partBudgetMs: number
}

/** What a trial measures: part 1 or part 2. */
export type Measure = "throughput" | "memory"

export interface VirtualTrial {
  readonly rep: number
  readonly scheduled: number
  readonly ran: number
  readonly scheduleMs: number
  readonly runMs: number
  /** N / (schedule + run); NaN when cut off or not measured. */
  readonly tasksPerSec: number
  /** Retained bytes after scheduling over the baseline taken before `create`; NaN unless measured. */
  readonly bytes: number
  readonly bytesPerTask: number
  readonly figures: Record<string, number>
  readonly cutOff?: string | undefined
  /** Seconds from the start of scheduling to the cut-off. */
  readonly cutOffAfterS?: number | undefined
}

export interface VirtualRow {
  readonly key: string
  readonly name: string
  readonly n: number
  readonly trials: Array<VirtualTrial>
  skipped?: string | undefined
}

export const workload = (n: number, seed: number, delayRangeMs: number): Workload => {
  const delays = uniformInts(seeded(seed ^ n), n, delayRangeMs)
  let end = 0
  for (let k = 0; k < n; k++) end = Math.max(end, delays[k] as number)
  return { n, delays, end, job: noop }
}

/**
 * Size of the untimed warm-up trial a contender runs before the measured ones. The core's
 * loops reach their optimized code only after ~100k tasks, so fast contenders warm up on 200k;
 * bounded ones spend microseconds a task, far above any JIT effect, and warm up on 5k.
 */
export const warmUpTasks = (c: VirtualContender): number => (c.bounded ? 5_000 : 200_000)

const runTrial = async (
  c: VirtualContender,
  w: Workload,
  rep: number,
  cutOffMs: number,
  measure: Measure,
): Promise<VirtualTrial> => {
  await quiesce()
  const base = retainedBytes()
  const instance = await c.create()
  const t0 = performance.now()
  const deadline = t0 + cutOffMs
  const s = await instance.schedule(w, { deadline, keepHandles: false })
  const t1 = performance.now()
  const scheduleMs = t1 - t0
  let bytes = Number.NaN
  let runMs = Number.NaN
  let ran = 0
  let cutOff = s.cutOff
  let cutOffAfterS = s.cutOff === undefined ? undefined : scheduleMs / 1000
  if (measure === "memory") {
    await quiesce()
    bytes = retainedBytes() - base
  } else if (s.cutOff === undefined) {
    const r = await instance.run(w, deadline)
    runMs = performance.now() - t1
    ran = r.done
    if (r.cutOff !== undefined) {
      cutOff = r.cutOff
      cutOffAfterS = (scheduleMs + runMs) / 1000
    }
  }
  const figures = instance.figures?.() ?? {}
  await instance.close?.()
  return {
    rep,
    scheduled: s.done,
    ran,
    scheduleMs,
    runMs,
    tasksPerSec:
      measure === "throughput" && cutOff === undefined
        ? w.n / ((scheduleMs + runMs) / 1000)
        : Number.NaN,
    bytes,
    bytesPerTask: bytes / Math.max(1, s.done),
    figures,
    cutOff,
    cutOffAfterS,
  }
}

/** Runs every trial; returns one row per contender and size, in contender order per size. */
export const runVirtual = async (
  config: VirtualConfig,
  measure: Measure,
): Promise<Array<VirtualRow>> => {
  const budget = new Budget(config.partBudgetMs)
  const rows: Array<VirtualRow> = []
  /** Contender key → the size it was cut off at. */
  const cutAt = new Map<string, number>()
  /** Last wall time of a trial per contender, to predict the next one. */
  const lastWall = new Map<string, { n: number; ms: number }>()
  // One untimed trial per contender first, so the first timed rep is not a JIT warm-up.
  for (const c of config.contenders) {
    const n = warmUpTasks(c)
    await runTrial(c, workload(n, config.seed, config.delayRangeMs), 0, config.cutOffMs, measure)
  }
  progress(`warmed up [${(budget.elapsed() / 1000).toFixed(1)} s]`)
  for (const n of config.sizes) {
    const w = workload(n, config.seed, config.delayRangeMs)
    const sizeRows = config.contenders.map(
      (c): VirtualRow => ({
        key: c.key,
        name: c.name,
        n,
        trials: [],
      }),
    )
    rows.push(...sizeRows)
    for (let rep = 0; rep < config.reps; rep++) {
      for (let i = 0; i < config.contenders.length; i++) {
        const c = config.contenders[i] as VirtualContender
        const row = sizeRows[i] as VirtualRow
        if (row.skipped !== undefined) continue
        const cut = cutAt.get(c.key)
        if (cut !== undefined) {
          if (cut < n) row.skipped = `not tried: cut off at ${count(cut)}`
          continue
        }
        const last = lastWall.get(c.key)
        // A cut-off trial also collects and drops a heap of up to ~2 GB: about 8 s here.
        const estimate = c.bounded
          ? config.cutOffMs + 8_000
          : last === undefined
            ? 1_000
            : last.ms * (n / last.n) * 1.3
        if (!budget.fits(estimate)) {
          row.skipped = `skipped after ${row.trials.length} reps: part budget (${Math.round(config.partBudgetMs / 1000)} s)`
          continue
        }
        const cutOffMs = Math.min(config.cutOffMs, Math.max(1_000, budget.remaining() - 5_000))
        const t0 = performance.now()
        const trial = await runTrial(c, w, rep + 1, cutOffMs, measure)
        const wall = performance.now() - t0
        lastWall.set(c.key, { n, ms: wall })
        row.trials.push(trial)
        progress(
          `${count(n)} rep ${rep + 1} ${c.name}: ${
            trial.cutOff === undefined
              ? measure === "throughput"
                ? `${rate(trial.tasksPerSec)} tasks/s`
                : `${fixed(trial.bytesPerTask, 1)} B/task`
              : `cut off (${trial.cutOff}) after ${fixed(trial.cutOffAfterS ?? 0, 1)} s: ${int(trial.scheduled)} scheduled, ${int(trial.ran)} run`
          } [${(wall / 1000).toFixed(1)} s]`,
        )
        if (trial.cutOff !== undefined) cutAt.set(c.key, n)
      }
    }
  }
  return rows
}

// ---------------------------------------------------------------------------- reports

const completed = (row: VirtualRow) =>
  row.trials.filter((t) => t.cutOff === undefined && Number.isFinite(t.tasksPerSec))
const measured = (row: VirtualRow) => row.trials.filter((t) => Number.isFinite(t.bytes))

export interface VirtualSummary {
  readonly key: string
  readonly name: string
  readonly n: number
  readonly tasksPerSec: Summary
  readonly scheduleMs: Summary
  readonly runMs: Summary
  readonly bytesPerTask: Summary
  /**
   * Tasks/s over the ceiling's in the same rep (the two trials ran back to back), one ratio
   * per rep: pairing cancels most of the drift in machine load between reps.
   */
  readonly throughputVsCeiling: Summary
  readonly bytesVsCeiling: number
  readonly cutOff?: VirtualTrial | undefined
  readonly skipped?: string | undefined
  readonly figures: Record<string, number>
}

export const summarizeVirtual = (
  rows: ReadonlyArray<VirtualRow>,
  contenders: ReadonlyArray<VirtualContender>,
): Array<VirtualSummary> => {
  const ceilingKey = contenders.find((c) => c.ceiling)?.key
  const base = (row: VirtualRow) => rows.find((r) => r.key === ceilingKey && r.n === row.n)
  const out: Array<VirtualSummary> = []
  for (const row of rows) {
    const done = completed(row)
    const tasksPerSec = summarize(done.map((t) => t.tasksPerSec))
    const bytesPerTask = summarize(measured(row).map((t) => t.bytesPerTask))
    const ref = base(row)
    const paired = done.flatMap((t) => {
      const r = ref === undefined ? undefined : completed(ref).find((x) => x.rep === t.rep)
      return r === undefined ? [] : [t.tasksPerSec / r.tasksPerSec]
    })
    const refBytes =
      ref === undefined ? Number.NaN : summarize(measured(ref).map((t) => t.bytesPerTask)).median
    const last = row.trials[row.trials.length - 1]
    out.push({
      key: row.key,
      name: row.name,
      n: row.n,
      tasksPerSec,
      scheduleMs: summarize(done.map((t) => t.scheduleMs)),
      runMs: summarize(done.map((t) => t.runMs)),
      bytesPerTask,
      throughputVsCeiling: summarize(paired),
      bytesVsCeiling: bytesPerTask.median / refBytes,
      cutOff: row.trials.find((t) => t.cutOff !== undefined),
      skipped: row.skipped,
      figures: last?.figures ?? {},
    })
  }
  return out
}

const cutOffNote = (t: VirtualTrial, unit: string): string =>
  t.cutOff === "heap guard"
    ? `did not finish: stopped at the heap guard (half the heap limit) after ${fixed(t.cutOffAfterS ?? 0, 1)} s, ${int(t.scheduled)} ${unit} scheduled, ${int(t.ran)} run`
    : `did not finish in ${fixed(t.cutOffAfterS ?? 0, 1)} s: ${int(t.scheduled)} ${unit} scheduled, ${int(t.ran)} run`

const unitOf = (key: string): string =>
  key === "effect" ? "fibers" : key === "xstate" ? "actors" : "tasks"

export const throughputTable = (summaries: ReadonlyArray<VirtualSummary>): string =>
  table(
    [
      { title: "contender", align: "left" },
      { title: "tasks" },
      { title: "tasks/s median (min–max)" },
      { title: "vs ceiling, paired by rep" },
      { title: "schedule ms" },
      { title: "run ms" },
      { title: "note", align: "left" },
    ],
    summaries.map((s) => {
      const finished = s.tasksPerSec.values.length > 0
      return [
        s.name,
        count(s.n),
        finished ? spread(s.tasksPerSec, rate) : "–",
        s.throughputVsCeiling.values.length > 0 ? spread(s.throughputVsCeiling, ratio) : "–",
        finished ? ms(s.scheduleMs.median) : "–",
        finished ? ms(s.runMs.median) : "–",
        s.cutOff !== undefined
          ? cutOffNote(s.cutOff, unitOf(s.key))
          : (s.skipped ??
            (s.tasksPerSec.values.length < 3 ? `${s.tasksPerSec.values.length} reps` : "")),
      ]
    }),
  )

export const memoryTable = (summaries: ReadonlyArray<VirtualSummary>): string =>
  table(
    [
      { title: "contender", align: "left" },
      { title: "tasks" },
      { title: "bytes/pending task median (min–max)" },
      { title: "vs ceiling" },
      { title: "total MB" },
      { title: "note", align: "left" },
    ],
    summaries.map((s) => {
      const measured = s.bytesPerTask.values.length > 0
      const notes: Array<string> = []
      if (s.cutOff !== undefined) {
        notes.push(
          `measured over ${int(s.cutOff.scheduled)} ${unitOf(s.key)} (cut off: ${s.cutOff.cutOff})`,
        )
      }
      if (s.figures.arrayBytes !== undefined && s.cutOff === undefined) {
        notes.push(`typed arrays ${fixed(s.figures.arrayBytes / s.n, 1)} B/task`)
      }
      if (s.skipped !== undefined) notes.push(s.skipped)
      const scheduled = s.cutOff?.scheduled ?? s.n
      return [
        s.name,
        count(s.n),
        measured ? spread(s.bytesPerTask, bytes) : "–",
        measured ? ratio(s.bytesVsCeiling) : "–",
        measured ? fixed((s.bytesPerTask.median * scheduled) / 2 ** 20, 1) : "–",
        notes.join("; "),
      ]
    }),
  )
