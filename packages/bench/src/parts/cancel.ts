/**
 * Part 4: cancellation-heavy. Schedule N one-shot tasks (keeping the handles a caller needs to
 * cancel), cancel a random half in random order, drop the handles, gc and read the memory
 * and heap entries, then run the rest. The same seeded half is cancelled in every trial.
 */
import type { VirtualContender, Workload } from "../contenders/virtual.ts"
import { Budget, progress } from "../lib/budget.ts"
import { quiesce, retainedBytes } from "../lib/env.ts"
import { count, fixed, int, ms, spread, table } from "../lib/format.ts"
import { sample, seeded } from "../lib/random.ts"
import { type Summary, summarize } from "../lib/stats.ts"
import { warmUpTasks, workload } from "./virtual.ts"

export interface CancelConfig {
  readonly sizes: ReadonlyArray<number>
  readonly reps: number
  readonly seed: number
  readonly contenders: ReadonlyArray<VirtualContender>
  readonly delayRangeMs: number
  readonly partBudgetMs: number
}

export interface CancelTrial {
  readonly rep: number
  readonly scheduleMs: number
  readonly cancelMs: number
  readonly runMs: number
  readonly totalMs: number
  readonly cancelled: number
  readonly ran: number
  /** Retained bytes after cancelling, handles dropped, over the baseline before `create`. */
  readonly bytesAfterCancel: number
  readonly heapEntries: number
  readonly deadEntries: number
}

export interface CancelRow {
  readonly key: string
  readonly name: string
  readonly n: number
  readonly trials: Array<CancelTrial>
  skipped?: string | undefined
}

/** One trial, in its own function so nothing of it stays referenced once it returns. */
const runTrial = async (
  c: VirtualContender,
  w: Workload,
  half: Uint32Array,
  rep: number,
): Promise<CancelTrial> => {
  await quiesce()
  const base = retainedBytes()
  const instance = await c.create()
  if (instance.cancel === undefined) throw new Error(`${c.key} cannot cancel`)
  const t0 = performance.now()
  await instance.schedule(w, { deadline: Number.POSITIVE_INFINITY, keepHandles: true })
  const t1 = performance.now()
  const cancelled = instance.cancel(half)
  const t2 = performance.now()
  instance.dropHandles?.()
  const figures = instance.figures?.() ?? {}
  await quiesce()
  const bytesAfterCancel = retainedBytes() - base
  const t3 = performance.now()
  const r = await instance.run(w, Number.POSITIVE_INFINITY)
  const t4 = performance.now()
  await instance.close?.()
  return {
    rep,
    scheduleMs: t1 - t0,
    cancelMs: t2 - t1,
    runMs: t4 - t3,
    totalMs: t4 - t3 + (t2 - t0),
    cancelled,
    ran: r.done,
    bytesAfterCancel,
    heapEntries: figures.heapEntries ?? Number.NaN,
    deadEntries: figures.deadEntries ?? Number.NaN,
  }
}

export const runCancel = async (config: CancelConfig): Promise<Array<CancelRow>> => {
  const budget = new Budget(config.partBudgetMs)
  const rows: Array<CancelRow> = []
  const lastWall = new Map<string, number>()
  for (const c of config.contenders) {
    const n = warmUpTasks(c)
    const warm = workload(n, config.seed, config.delayRangeMs)
    await runTrial(c, warm, sample(seeded(config.seed), n, n / 2), 0)
  }
  for (const n of config.sizes) {
    const w = workload(n, config.seed, config.delayRangeMs)
    const half = sample(seeded(config.seed ^ n ^ 0xca1), n, Math.floor(n / 2))
    const sizeRows = config.contenders.map(
      (c): CancelRow => ({ key: c.key, name: c.name, n, trials: [] }),
    )
    rows.push(...sizeRows)
    for (let rep = 0; rep < config.reps; rep++) {
      for (let i = 0; i < config.contenders.length; i++) {
        const c = config.contenders[i] as VirtualContender
        const row = sizeRows[i] as CancelRow
        if (row.skipped !== undefined) continue
        if (!budget.fits((lastWall.get(c.key) ?? 2_000) * 1.3)) {
          row.skipped = `stopped after ${row.trials.length} reps: part budget`
          continue
        }
        const t = performance.now()
        const trial = await runTrial(c, w, half, rep + 1)
        row.trials.push(trial)
        lastWall.set(c.key, performance.now() - t)
        progress(
          `${count(n)} rep ${rep + 1} ${c.name}: schedule ${ms(trial.scheduleMs)} cancel ${ms(trial.cancelMs)} run ${ms(trial.runMs)} ms, ${fixed(trial.bytesAfterCancel / 2 ** 20, 1)} MB, heap ${int(trial.heapEntries)} entries (${int(trial.deadEntries)} dead), ran ${int(trial.ran)}`,
        )
      }
    }
  }
  return rows
}

export interface CancelSummary {
  readonly key: string
  readonly name: string
  readonly n: number
  readonly scheduleMs: Summary
  readonly cancelMs: Summary
  readonly runMs: Summary
  readonly totalMs: Summary
  readonly mbAfterCancel: Summary
  readonly bytesPerLiveTask: Summary
  readonly heapEntries: Summary
  readonly deadEntries: Summary
  readonly cancelled: number
  readonly ran: number
  readonly skipped?: string | undefined
}

export const summarizeCancel = (rows: ReadonlyArray<CancelRow>): Array<CancelSummary> =>
  rows.map((r) => {
    const pick = (f: (t: CancelTrial) => number) => summarize(r.trials.map(f))
    const last = r.trials[r.trials.length - 1]
    return {
      key: r.key,
      name: r.name,
      n: r.n,
      scheduleMs: pick((t) => t.scheduleMs),
      cancelMs: pick((t) => t.cancelMs),
      runMs: pick((t) => t.runMs),
      totalMs: pick((t) => t.totalMs),
      mbAfterCancel: pick((t) => t.bytesAfterCancel / 2 ** 20),
      bytesPerLiveTask: pick((t) => t.bytesAfterCancel / Math.max(1, r.n - t.cancelled)),
      heapEntries: pick((t) => t.heapEntries),
      deadEntries: pick((t) => t.deadEntries),
      cancelled: last?.cancelled ?? 0,
      ran: last?.ran ?? 0,
      skipped: r.skipped,
    }
  })

export const cancelTable = (summaries: ReadonlyArray<CancelSummary>): string =>
  table(
    [
      { title: "contender", align: "left" },
      { title: "tasks" },
      { title: "cancelled" },
      { title: "total ms" },
      { title: "schedule ms" },
      { title: "cancel ms" },
      { title: "run ms" },
      { title: "MB after cancel" },
      { title: "B/live task" },
      { title: "heap entries" },
      { title: "dead entries" },
      { title: "ran" },
      { title: "note", align: "left" },
    ],
    summaries.map((s) => {
      const has = s.totalMs.values.length > 0
      return [
        s.name,
        count(s.n),
        int(s.cancelled),
        has ? spread(s.totalMs, ms) : "–",
        has ? ms(s.scheduleMs.median) : "–",
        has ? ms(s.cancelMs.median) : "–",
        has ? ms(s.runMs.median) : "–",
        has ? spread(s.mbAfterCancel, (x) => fixed(x, 1)) : "–",
        has ? fixed(s.bytesPerLiveTask.median, 1) : "–",
        has ? int(s.heapEntries.median) : "–",
        has ? int(s.deadEntries.median) : "–",
        int(s.ran),
        s.skipped ?? "",
      ]
    }),
  )
