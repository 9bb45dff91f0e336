/**
 * Part 5: burst throughput. N one-shot no-op jobs, all due at once, run as fast as each
 * contender can; tasks/s = N / (time from the moment they are due to the last one finished).
 *
 * - the tickwork runtime: N Effect jobs scheduled at one slot through the service on TestClock,
 *   then the clock moved to it; rows for 1 and 8 workers, the inspection hook on and off, and
 *   with the ledger and log annotations off (what the default observability costs);
 * - beside it, on the real clock with every task due now: one setTimeout over a heap (the
 *   limit), a setTimeout per task, an Effect fiber per task (`Effect.sleep(0)`: the fibers exist
 *   before the tasks fall due and only wake), and an Effect fiber per task forked when due.
 *
 * Beside the rate: the end-to-end rate (n over schedule + run time), the share of the run phase
 * spent in garbage collection and the JS heap bytes allocated per task in it (lib/gc.ts).
 *
 * Each trial first runs {@link WARM_TASKS} tasks the same way on the same instance, untimed: code
 * optimised on another instance is discarded once that instance is collected (V8 drops optimised
 * code whose embedded objects died), and the timed run would otherwise pay for compiling it
 * again (the runtime: ~0.93–0.99M/s cold against 1.07–1.09M/s warm, in one process).
 */
import { Schedule, type Scheduler } from "@tickwork/runtime"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { TypedHeap } from "../baselines/TypedHeap.ts"
import { finished, scheduleAll, testClockEnv } from "../contenders/runtime.ts"
import { Budget, progress } from "../lib/budget.ts"
import { quiesce } from "../lib/env.ts"
import { count, fixed, ms, rate, spread, table } from "../lib/format.ts"
import { startGcReading } from "../lib/gc.ts"
import { type Summary, summarize } from "../lib/stats.ts"

/** Tasks each trial runs on its own instance, untimed, before the timed ones. */
const WARM_TASKS = 20_000

/**
 * The runtime rows' job: a no-op `Effect.sync`, as the fiber rows run (`Effect.void` is an
 * already-computed `Exit`, which a fiber completes without running anything: not the same work).
 */
const noopJob: Effect.Effect<void> = Effect.sync(() => {})

/** One burst trial: schedule (untimed for the baselines, which arm synchronously), then run. */
export interface BurstTrial {
  readonly rep: number
  readonly scheduleMs: number
  readonly runMs: number
  readonly finished: number
  /** Share of the run phase spent in garbage collection, 0–1. */
  readonly gcShare: number
  /** JS heap bytes allocated per task during the run phase. */
  readonly bytesPerRun: number
}

export interface BurstContender {
  readonly key: string
  readonly name: string
  readonly limit?: boolean
  /** Arms n tasks; returns how to fire them all and await the last one. */
  readonly trial: (n: number) => Promise<BurstTrial>
}

const runtimeRow = (
  key: string,
  name: string,
  options: Scheduler.SchedulerOptions,
): BurstContender => ({
  key,
  name,
  trial: async (n) => {
    const env = await testClockEnv(options)
    try {
      await scheduleAll(env, WARM_TASKS, () => Schedule.at(1), noopJob)
      await env.run(TestClock.adjust(1))
      const warmed = await finished(env)
      const t0 = performance.now()
      await scheduleAll(env, n, () => Schedule.at(2), noopJob)
      const gc = startGcReading()
      const t1 = performance.now()
      await env.run(TestClock.adjust(1))
      const done = (await finished(env)) - warmed
      const runMs = performance.now() - t1
      return { rep: 0, scheduleMs: t1 - t0, runMs, finished: done, ...perRun(gc.stop(), n) }
    } finally {
      await env.close()
    }
  },
})

/** The GC columns of a trial of n tasks. */
const perRun = (
  gc: { readonly gcShare: number; readonly allocatedBytes: number },
  n: number,
): { gcShare: number; bytesPerRun: number } => ({
  gcShare: gc.gcShare,
  bytesPerRun: gc.allocatedBytes / n,
})

/** A promise for the n-th call of the returned callback. */
const countdown = (n: number): [() => void, Promise<void>] => {
  let left = n
  let resolve: () => void = () => {}
  const all = new Promise<void>((r) => {
    resolve = r
  })
  return [() => (--left === 0 ? resolve() : undefined), all]
}

const singleTimerBurst: BurstContender = {
  key: "single-timer",
  name: "heap + one setTimeout (limit)",
  limit: true,
  trial: async (n) => {
    const heap = new TypedHeap()
    const fire = (count: number): Promise<void> => {
      const [done, all] = countdown(count)
      setTimeout(() => {
        while (heap.size > 0) {
          heap.pop()
          done()
        }
      }, 0)
      return all
    }
    for (let k = 0; k < WARM_TASKS; k++) heap.push(0, k, k)
    await fire(WARM_TASKS)
    const t0 = performance.now()
    for (let k = 0; k < n; k++) heap.push(0, k, k)
    const gc = startGcReading()
    const t1 = performance.now()
    await fire(n)
    const runMs = performance.now() - t1
    return { rep: 0, scheduleMs: t1 - t0, runMs, finished: n, ...perRun(gc.stop(), n) }
  },
}

const timeoutPerTaskBurst: BurstContender = {
  key: "set-timeout",
  name: "setTimeout(0) per task",
  trial: async (n) => {
    const arm = (count: number): Promise<void> => {
      const [done, all] = countdown(count)
      for (let k = 0; k < count; k++) setTimeout(done, 0)
      return all
    }
    await arm(WARM_TASKS)
    const t0 = performance.now()
    const all = arm(n)
    const gc = startGcReading()
    const t1 = performance.now()
    await all
    const runMs = performance.now() - t1
    return { rep: 0, scheduleMs: t1 - t0, runMs, finished: n, ...perRun(gc.stop(), n) }
  },
}

const effectSleepBurst: BurstContender = {
  key: "effect-sleep",
  name: "Effect fiber per task (sleep 0)",
  trial: async (n) => {
    const fork = (count: number): Promise<void> => {
      const [done, all] = countdown(count)
      const job = Effect.andThen(Effect.sleep(0), Effect.sync(done))
      for (let k = 0; k < count; k++) Effect.runFork(job)
      return all
    }
    await fork(WARM_TASKS)
    const t0 = performance.now()
    const all = fork(n)
    const gc = startGcReading()
    const t1 = performance.now()
    await all
    const runMs = performance.now() - t1
    return { rep: 0, scheduleMs: t1 - t0, runMs, finished: n, ...perRun(gc.stop(), n) }
  },
}

/**
 * A fiber per task forked when the tasks fall due (what a scheduler that forks each run does),
 * beside `effect-sleep`, whose fibers exist before the clock starts and only wake.
 */
const effectForkBurst: BurstContender = {
  key: "effect-fork",
  name: "Effect fiber per task, forked when due",
  trial: async (n) => {
    const fork = (count: number): Promise<void> => {
      const [done, all] = countdown(count)
      const job = Effect.sync(done)
      setTimeout(() => {
        for (let k = 0; k < count; k++) Effect.runFork(job)
      }, 0)
      return all
    }
    await fork(WARM_TASKS)
    const gc = startGcReading()
    const t1 = performance.now()
    await fork(n)
    const runMs = performance.now() - t1
    return { rep: 0, scheduleMs: 0, runMs, finished: n, ...perRun(gc.stop(), n) }
  },
}

/** The rows of part 5, in order. */
export const burstContenders: ReadonlyArray<BurstContender> = [
  singleTimerBurst,
  timeoutPerTaskBurst,
  effectSleepBurst,
  effectForkBurst,
  runtimeRow("runtime-1", "tickwork runtime, 1 worker", { workers: 1 }),
  runtimeRow("runtime-8", "tickwork runtime, 8 workers", { workers: 8 }),
  runtimeRow("runtime-8-inspect", "  … with inspect on (a no-op observer)", {
    workers: 8,
    inspect: () => {},
  }),
  runtimeRow("runtime-8-lean", "  … without ledger and log annotations", {
    workers: 8,
    ledgerPerTask: 0,
    logAnnotations: false,
  }),
]

export interface BurstRow {
  readonly key: string
  readonly name: string
  readonly n: number
  readonly trials: Array<BurstTrial>
  skipped?: string | undefined
}

export const runBurst = async (config: {
  readonly sizes: ReadonlyArray<number>
  readonly reps: number
  readonly contenders: ReadonlyArray<BurstContender>
  readonly partBudgetMs: number
}): Promise<Array<BurstRow>> => {
  const budget = new Budget(config.partBudgetMs)
  const rows: Array<BurstRow> = []
  // Untimed warm-up of every contender, so each timed trial runs optimised code.
  for (const c of config.contenders) {
    await quiesce()
    await c.trial(50_000)
  }
  for (const n of config.sizes) {
    const sizeRows = config.contenders.map((c) => ({
      key: c.key,
      name: c.name,
      n,
      trials: [] as Array<BurstTrial>,
    }))
    rows.push(...sizeRows)
    for (let rep = 0; rep < config.reps; rep++) {
      for (const [i, c] of config.contenders.entries()) {
        const row = sizeRows[i] as BurstRow
        const last = row.trials.at(-1)
        const expected = last === undefined ? n * 0.01 : (last.scheduleMs + last.runMs) * 1.5 + 500
        if (!budget.fits(expected)) {
          row.skipped = `${row.trials.length} of ${config.reps} reps: part budget`
          continue
        }
        await quiesce()
        const trial = { ...(await c.trial(n)), rep }
        row.trials.push(trial)
        progress(`burst ${c.key} n=${count(n)} rep ${rep}: ${rate((n / trial.runMs) * 1000)}/s`)
      }
    }
  }
  return rows
}

export interface BurstSummary {
  readonly key: string
  readonly name: string
  readonly n: number
  readonly reps: number
  readonly tasksPerSecond: Summary
  readonly scheduleMs: Summary
  readonly runMs: Summary
  readonly vsLimit: Summary
  /** Run rate over the `effect-sleep` row's, paired by rep (empty when that row did not run). */
  readonly vsFiber: Summary
  /** End-to-end rate over the `effect-sleep` row's end-to-end rate, paired by rep. */
  readonly endToEndVsFiber: Summary
  /** End to end: n / (schedule + run time). */
  readonly endToEnd: Summary
  readonly gcShare: Summary
  readonly bytesPerRun: Summary
  readonly complete: boolean
  readonly note: string | undefined
}

export const summarizeBurst = (rows: ReadonlyArray<BurstRow>): Array<BurstSummary> =>
  rows.map((row) => {
    const limit = rows.find((r) => r.n === row.n && r.key === burstContenders[0]?.key)
    const rates = row.trials.map((t) => (row.n / t.runMs) * 1000)
    const vs = row.trials.flatMap((t) => {
      const l = limit?.trials.find((x) => x.rep === t.rep)
      return l === undefined ? [] : [l.runMs / t.runMs]
    })
    const fiber = rows.find((r) => r.n === row.n && r.key === "effect-sleep")
    const vsFiber: Array<number> = []
    const endToEndVsFiber: Array<number> = []
    for (const t of row.trials) {
      const f = fiber?.trials.find((x) => x.rep === t.rep)
      if (f === undefined) continue
      vsFiber.push(f.runMs / t.runMs)
      endToEndVsFiber.push((f.scheduleMs + f.runMs) / (t.scheduleMs + t.runMs))
    }
    return {
      key: row.key,
      name: row.name,
      n: row.n,
      reps: row.trials.length,
      tasksPerSecond: summarize(rates),
      vsFiber: summarize(vsFiber),
      endToEndVsFiber: summarize(endToEndVsFiber),
      scheduleMs: summarize(row.trials.map((t) => t.scheduleMs)),
      runMs: summarize(row.trials.map((t) => t.runMs)),
      vsLimit: summarize(vs),
      endToEnd: summarize(row.trials.map((t) => (row.n / (t.scheduleMs + t.runMs)) * 1000)),
      gcShare: summarize(row.trials.map((t) => t.gcShare)),
      bytesPerRun: summarize(row.trials.map((t) => t.bytesPerRun)),
      complete: row.trials.every((t) => t.finished === row.n),
      note: row.skipped,
    }
  })

/**
 * Each row's ratios to the `effect-sleep` row, rep by rep (run rate, wake only; and end to end),
 * as lines under the table: with a GC-bound baseline that swings ±30% between reps, a median
 * alone says little.
 */
export const burstRatios = (summaries: ReadonlyArray<BurstSummary>): string =>
  summaries
    .filter((s) => s.key !== "effect-sleep" && s.vsFiber.values.length > 0)
    .map(
      (s) =>
        `${s.name.trim()} (${count(s.n)}) vs effect-sleep, per rep: run ${s.vsFiber.values
          .map((v) => `${fixed(v, 2)}×`)
          .join(" ")} (median ${fixed(s.vsFiber.median, 2)}×); end to end ${s.endToEndVsFiber.values
          .map((v) => `${fixed(v, 2)}×`)
          .join(" ")} (median ${fixed(s.endToEndVsFiber.median, 2)}×)`,
    )
    .join("\n")

export const burstTable = (summaries: ReadonlyArray<BurstSummary>): string =>
  table(
    [
      { title: "contender", align: "left" },
      { title: "tasks" },
      { title: "run tasks/s median (min–max)" },
      { title: "vs limit" },
      { title: "schedule ms" },
      { title: "run ms" },
      { title: "end to end /s" },
      { title: "GC %" },
      { title: "B/run" },
      { title: "note", align: "left" },
    ],
    summaries.map((s) => [
      s.name,
      count(s.n),
      spread(s.tasksPerSecond, rate),
      `${fixed(s.vsLimit.median, 2)}×`,
      ms(s.scheduleMs.median),
      ms(s.runMs.median),
      rate(s.endToEnd.median),
      fixed(s.gcShare.median * 100, 1),
      fixed(s.bytesPerRun.median, 0),
      [s.complete ? "" : "not all finished", s.note ?? ""].filter((x) => x !== "").join("; "),
    ]),
  )
