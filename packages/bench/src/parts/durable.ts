/**
 * Part 6: the durable store (`@tickwork/durable`) beside raw baselines on the same table,
 * measured in the same run: better-sqlite3 used directly, and PostgreSQL through the same driver
 * without the scheduler. PostgreSQL is `DATABASE_URL`, or a throwaway local cluster started for
 * the part (default durability: fsync on).
 *
 * Rows: schedule throughput (one commit per task; one transaction for many), restart with 100k
 * pending tasks, runs/s with two processes claiming 10k due rows, and real-clock lateness.
 */
import * as Measure from "../durable/measure.ts"
import * as Server from "../durable/postgres.ts"
import { Budget, progress } from "../lib/budget.ts"
import { count, fixed, ms, rate, spread, table } from "../lib/format.ts"
import { type Summary, summarize } from "../lib/stats.ts"

/** One row: a figure for the durable scheduler and for its baseline, per rep. */
export interface DurableRow {
  readonly key: string
  readonly what: string
  /** What the figures are: a rate (higher is better) or milliseconds (lower is better). */
  readonly unit: "per-s" | "ms"
  readonly baseline: string
  readonly durable: Array<number>
  readonly raw: Array<number>
  /** Per rep, durable / raw by CPU time (see `Measure.Pair.durableCpu`), where measured. */
  readonly cpuRatio: Array<number>
  skipped?: string | undefined
}

/** Lateness of one setup, per rep. */
export interface LatenessRow {
  readonly key: string
  readonly what: string
  readonly trials: Array<Measure.Lateness>
  skipped?: string | undefined
}

export interface DurableResults {
  readonly server: string
  readonly rows: Array<DurableRow>
  readonly lateness: Array<LatenessRow>
}

interface Plan {
  readonly key: string
  readonly what: string
  readonly unit: "per-s" | "ms"
  readonly baseline: string
  /** Rough seconds per trial, for the budget. */
  readonly cost: number
  readonly trial: (server: Server.Server) => Promise<Measure.Pair>
}

const plans: ReadonlyArray<Plan> = [
  {
    key: "sqlite-schedule",
    what: "SQLite: schedule() 5k, one commit each (WAL, synchronous=NORMAL)",
    unit: "per-s",
    baseline: "better-sqlite3 INSERT, one commit each",
    cost: 2,
    trial: () => Measure.sqliteSchedule(5_000),
  },
  {
    key: "sqlite-schedule-full",
    what: "SQLite: schedule() 2k, one commit each (synchronous=FULL)",
    unit: "per-s",
    baseline: "better-sqlite3 INSERT, one commit each",
    cost: 2,
    trial: () => Measure.sqliteSchedule(2_000, "FULL"),
  },
  {
    key: "sqlite-schedule-all",
    what: "SQLite: scheduleAll() 100k, one transaction",
    unit: "per-s",
    baseline: "better-sqlite3 INSERTs, one transaction",
    cost: 3,
    trial: () => Measure.sqliteScheduleAll(100_000),
  },
  {
    key: "pg-schedule",
    what: "PostgreSQL: schedule() 2k, one commit each",
    unit: "per-s",
    baseline: "@effect/sql-pg INSERT, one commit each",
    cost: 3,
    trial: (s) => Measure.pgSchedule(s, 2_000, false),
  },
  {
    key: "pg-schedule-all",
    what: "PostgreSQL: scheduleAll() 20k, one transaction",
    unit: "per-s",
    baseline: "@effect/sql-pg INSERTs of 400 rows, one transaction",
    cost: 3,
    trial: (s) => Measure.pgSchedule(s, 20_000, true),
  },
  {
    key: "sqlite-restart",
    what: "SQLite restart, 100k pending: open → first due run",
    unit: "ms",
    baseline: "reading all 100k pending rows in due order",
    cost: 3,
    trial: () => Measure.restart("sqlite", undefined, 100_000),
  },
  {
    key: "pg-restart",
    what: "PostgreSQL restart, 100k pending: open → first due run",
    unit: "ms",
    baseline: "reading all 100k pending rows in due order",
    cost: 5,
    trial: (s) => Measure.restart("pg", s, 100_000),
  },
  {
    key: "pg-two-processes",
    what: "PostgreSQL, 2 processes, 10k due: runs/s (64 workers each)",
    unit: "per-s",
    baseline: "raw SKIP LOCKED claim of 50, then complete each",
    cost: 16,
    trial: async (s) => ({
      durable: await Measure.twoProcesses(s, 10_000, "durable"),
      raw: await Measure.twoProcesses(s, 10_000, "raw-50"),
    }),
  },
  {
    key: "pg-two-processes-1",
    what: "  … raw baseline claiming 1 row at a time",
    unit: "per-s",
    baseline: "raw SKIP LOCKED claim of 1, then complete it",
    cost: 12,
    trial: async (s) => ({
      durable: Number.NaN,
      raw: await Measure.twoProcesses(s, 10_000, "raw-1"),
    }),
  },
  {
    key: "pg-two-processes-limit",
    what: "  … under a fleet-wide handler limit that never binds (SPEC §20)",
    unit: "per-s",
    baseline: "the same two DurableSchedulers without limits",
    cost: 24,
    trial: async (s) => ({
      durable: await Measure.twoProcesses(s, 10_000, "durable-limit"),
      raw: await Measure.twoProcesses(s, 10_000, "durable"),
    }),
  },
  {
    key: "pg-two-processes-limit-32",
    what: "  … under a fleet-wide limit of 32 runs at once (of 128 workers)",
    unit: "per-s",
    baseline: "none",
    cost: 12,
    trial: async (s) => ({
      durable: await Measure.twoProcesses(s, 10_000, "durable-limit-32"),
      raw: Number.NaN,
    }),
  },
]

const latenessPlans = [
  {
    key: "sqlite",
    what: "SQLite, 1 process: 2,000 slots over 2 s",
    cost: 6,
    trial: () => Measure.lateness("sqlite", undefined, 2_000, 2_000),
  },
  {
    key: "pg",
    what: "PostgreSQL, 2 processes (poll 200 ms): 2,000 slots over 2 s",
    cost: 8,
    trial: (s: Server.Server) => Measure.lateness("pg", s, 2_000, 2_000),
  },
] as const

/** `DURABLE_ROWS=sqlite-schedule,…`: only these rows (lateness rows as `lateness-<key>`). */
const wanted = (key: string): boolean => {
  const list = process.env.DURABLE_ROWS
  return list === undefined || list === "" || list.split(",").includes(key)
}

/** Runs the part: reps interleaved across rows, within the part budget. */
export const runDurable = async (config: {
  readonly reps: number
  readonly partBudgetMs: number
}): Promise<DurableResults> => {
  const budget = new Budget(config.partBudgetMs)
  const server = await Server.start()
  try {
    const rows: Array<DurableRow> = plans.map((p) => ({
      key: p.key,
      what: p.what,
      unit: p.unit,
      baseline: p.baseline,
      durable: [],
      raw: [],
      cpuRatio: [],
    }))
    const late: Array<LatenessRow> = latenessPlans.map((p) => ({
      key: p.key,
      what: p.what,
      trials: [],
    }))
    for (let rep = 0; rep < config.reps; rep++) {
      for (const [i, p] of plans.entries()) {
        const row = rows[i] as DurableRow
        if (!wanted(p.key)) {
          row.skipped = "not in DURABLE_ROWS"
          continue
        }
        if (!budget.fits(p.cost * 1_500)) {
          row.skipped = `${row.durable.length} of ${config.reps} reps: part budget`
          continue
        }
        const r = await p.trial(server)
        row.durable.push(r.durable)
        row.raw.push(r.raw)
        if (r.durableCpu !== undefined && r.rawCpu !== undefined) {
          row.cpuRatio.push(r.durableCpu / r.rawCpu)
        }
        progress(`durable ${p.key} rep ${rep}: ${fixed(r.durable, 1)} vs ${fixed(r.raw, 1)}`)
      }
      for (const [i, p] of latenessPlans.entries()) {
        const row = late[i] as LatenessRow
        if (!wanted(`lateness-${p.key}`)) {
          row.skipped = "not in DURABLE_ROWS"
          continue
        }
        if (!budget.fits(p.cost * 1_500)) {
          row.skipped = `${row.trials.length} of ${config.reps} reps: part budget`
          continue
        }
        const l = await p.trial(server)
        row.trials.push(l)
        progress(`durable lateness ${p.key} rep ${rep}: p50 ${l.p50} p99 ${l.p99} max ${l.max} ms`)
      }
    }
    return { server: server.origin, rows, lateness: late }
  } finally {
    server.stop()
  }
}

const shown = (s: Summary, unit: "per-s" | "ms"): string =>
  s.values.length === 0 || Number.isNaN(s.median)
    ? "–"
    : unit === "per-s"
      ? `${spread(s, rate)}/s`
      : `${spread(s, ms)} ms`

/** The throughput/restart table and the lateness table. */
export const durableTables = (results: DurableResults): string => {
  const main = table(
    [
      { title: "measure", align: "left" },
      { title: "durable", align: "right" },
      { title: "raw baseline", align: "right" },
      { title: "durable / raw", align: "right" },
      { title: "baseline", align: "left" },
    ],
    results.rows.map((r) => {
      const d = summarize(r.durable.filter((x) => !Number.isNaN(x)))
      const b = summarize(r.raw)
      const ratio = d.values.length === 0 ? "" : `${fixed(d.median / b.median, 2)}×`
      return [
        r.what,
        shown(d, r.unit),
        shown(b, r.unit),
        ratio,
        r.baseline + (r.skipped ? ` (${r.skipped})` : ""),
      ]
    }),
  )
  const lat = table(
    [
      { title: "lateness (startedAt − slot)", align: "left" },
      { title: "p50 ms", align: "right" },
      { title: "p99 ms", align: "right" },
      { title: "max ms", align: "right" },
      { title: "runs", align: "right" },
    ],
    results.lateness.map((r) => [
      r.what + (r.skipped ? ` (${r.skipped})` : ""),
      spread(summarize(r.trials.map((t) => t.p50)), ms),
      spread(summarize(r.trials.map((t) => t.p99)), ms),
      spread(summarize(r.trials.map((t) => t.max)), ms),
      count(r.trials[0]?.runs ?? 0),
    ]),
  )
  // Each rep's ratio, from the two figures measured back to back in that rep.
  const perRep = results.rows
    .filter((r) => r.durable.length > 1)
    .map(
      (r) =>
        `  ${r.key}, durable / raw per rep: ${r.durable.map((d, k) => `${fixed(d / (r.raw[k] as number), 2)}×`).join(", ")}${
          r.cpuRatio.length === 0
            ? ""
            : `; by CPU time: ${r.cpuRatio.map((x) => `${fixed(x, 2)}×`).join(", ")} (median ${fixed(summarize(r.cpuRatio).median, 2)}×)`
        }`,
    )
  return `${main}\n${perRep.join("\n")}\n\n${lat}\n\nPostgreSQL: ${results.server}.`
}
