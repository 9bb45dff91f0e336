/**
 * Part 5: burst throughput. N one-shot no-op jobs, all due at once, run as fast as each
 * contender can; tasks/s = N / (time from the moment they are due to the last one finished).
 *
 * - the tickwork runtime: N Effect jobs scheduled at one slot through the service on TestClock,
 *   then the clock moved to it; rows for 1 and 8 workers, the inspection hook on and off, and
 *   with the ledger and log annotations off (what the default observability costs);
 * - beside it, on the real clock with every task due now: one setTimeout over a heap (the
 *   limit), a setTimeout per task, and an Effect fiber per task (`Effect.sleep(0)`).
 */
import { Schedule, type Scheduler } from "@tickwork/runtime"
import { Effect, type Fiber } from "effect"
import { TestClock } from "effect/testing"
import { TypedHeap } from "../baselines/TypedHeap.ts"
import { finished, scheduleAll, testClockEnv } from "../contenders/runtime.ts"
import { Budget, progress } from "../lib/budget.ts"
import { quiesce } from "../lib/env.ts"
import { count, fixed, ms, rate, spread, table } from "../lib/format.ts"
import { type Summary, summarize } from "../lib/stats.ts"

/** One burst trial: schedule (untimed for the baselines, which arm synchronously), then run. */
export interface BurstTrial {
  readonly rep: number
  readonly scheduleMs: number
  readonly runMs: number
  readonly finished: number
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
      const t0 = performance.now()
      await scheduleAll(env, n, () => Schedule.at(1), Effect.void)
      const t1 = performance.now()
      await env.run(TestClock.adjust(1))
      const done = await finished(env)
      return { rep: 0, scheduleMs: t1 - t0, runMs: performance.now() - t1, finished: done }
    } finally {
      await env.close()
    }
  },
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
    const t0 = performance.now()
    for (let k = 0; k < n; k++) heap.push(0, k, k)
    const [done, all] = countdown(n)
    const t1 = performance.now()
    setTimeout(() => {
      while (heap.size > 0) {
        heap.pop()
        done()
      }
    }, 0)
    await all
    return { rep: 0, scheduleMs: t1 - t0, runMs: performance.now() - t1, finished: n }
  },
}

const timeoutPerTaskBurst: BurstContender = {
  key: "set-timeout",
  name: "setTimeout(0) per task",
  trial: async (n) => {
    const [done, all] = countdown(n)
    const t0 = performance.now()
    for (let k = 0; k < n; k++) setTimeout(done, 0)
    const t1 = performance.now()
    await all
    return { rep: 0, scheduleMs: t1 - t0, runMs: performance.now() - t1, finished: n }
  },
}

const effectSleepBurst: BurstContender = {
  key: "effect-sleep",
  name: "Effect fiber per task (sleep 0)",
  trial: async (n) => {
    const [done, all] = countdown(n)
    const job = Effect.andThen(Effect.sleep(0), Effect.sync(done))
    const fibers: Array<Fiber.Fiber<void>> = new Array(n)
    const t0 = performance.now()
    for (let k = 0; k < n; k++) fibers[k] = Effect.runFork(job)
    const t1 = performance.now()
    await all
    return { rep: 0, scheduleMs: t1 - t0, runMs: performance.now() - t1, finished: n }
  },
}

/** The rows of part 5, in order. */
export const burstContenders: ReadonlyArray<BurstContender> = [
  singleTimerBurst,
  timeoutPerTaskBurst,
  effectSleepBurst,
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
    return {
      key: row.key,
      name: row.name,
      n: row.n,
      reps: row.trials.length,
      tasksPerSecond: summarize(rates),
      scheduleMs: summarize(row.trials.map((t) => t.scheduleMs)),
      runMs: summarize(row.trials.map((t) => t.runMs)),
      vsLimit: summarize(vs),
      complete: row.trials.every((t) => t.finished === row.n),
      note: row.skipped,
    }
  })

export const burstTable = (summaries: ReadonlyArray<BurstSummary>): string =>
  table(
    [
      { title: "contender", align: "left" },
      { title: "tasks" },
      { title: "run tasks/s median (min–max)" },
      { title: "vs limit" },
      { title: "schedule ms" },
      { title: "run ms" },
      { title: "note", align: "left" },
    ],
    summaries.map((s) => [
      s.name,
      count(s.n),
      spread(s.tasksPerSecond, rate),
      `${fixed(s.vsLimit.median, 2)}×`,
      ms(s.scheduleMs.median),
      ms(s.runMs.median),
      [s.complete ? "" : "not all finished", s.note ?? ""].filter((x) => x !== "").join("; "),
    ]),
  )
