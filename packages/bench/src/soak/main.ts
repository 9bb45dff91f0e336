/**
 * `pnpm soak --minutes N`: runs, side by side for N minutes, (1) an in-memory scheduler with
 * 100,000 tasks at a 1 s fixed rate in this process and (2) a durable fleet — a throwaway
 * PostgreSQL cluster (or `DATABASE_URL`), a few worker processes and a few thousand fixed-rate
 * tasks — and reports per 10-s window the heap (after a full GC), the RSS and the p99 lateness
 * (start − slot) of each: a table on stdout and a JSON file. It stops by itself after N minutes.
 * The memory part's `gc ms` column is its own forced full GC before the heap reading: it blocks
 * the event loop, so that window's p99/max lateness includes it (100k tasks: ~150–300 ms).
 *
 * Options: `--minutes N` (default 2), `--only memory|durable`, `--memory-tasks` (100000),
 * `--durable-tasks` (3000), `--durable-period` (s, 10), `--workers` (durable processes, 3),
 * `--out` (the JSON file; default soak-<time>.json in the OS temp directory).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { DurableScheduler, Handler, Postgres } from "@tickwork/durable"
import { Schedule, Scheduler } from "@tickwork/runtime"
import { Effect, Exit, Layer, Schema, Scope } from "effect"
import { Lateness } from "./window.ts"

const WINDOW_MS = 10_000

const arg = (name: string): string | undefined => {
  const args = process.argv.slice(2)
  const k = args.indexOf(`--${name}`)
  return k >= 0 ? args[k + 1] : args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
}
const num = (name: string, fallback: number, min: number, max: number): number => {
  const text = arg(name)
  if (text === undefined) return fallback
  const n = Number(text)
  if (!Number.isFinite(n) || n < min || n > max) {
    console.error(`--${name} must be a number from ${min} to ${max}, got ${JSON.stringify(text)}`)
    process.exit(2)
  }
  return n
}
const minutes = num("minutes", 2, 0.5, 24 * 60)
const only = arg("only")
if (only !== undefined && only !== "memory" && only !== "durable") {
  console.error(`--only must be memory or durable, got ${JSON.stringify(only)}`)
  process.exit(2)
}
const memoryTasks = num("memory-tasks", 100_000, 1, 10_000_000)
const durableTasks = num("durable-tasks", 3_000, 1, 1_000_000)
const durablePeriodS = num("durable-period", 10, 1, 3_600)
const workerCount = num("workers", 3, 1, 32)
const out =
  arg("out") ?? join(tmpdir(), `soak-${new Date().toISOString().replace(/[:.]/g, "-")}.json`)
const runMemory = only !== "durable"
const runDurable = only !== "memory"

interface Row {
  readonly part: "memory" | "durable"
  /** Window index; the window ends at (w + 1) × 10 s after the start. */
  readonly w: number
  readonly runs: number
  /** Bytes; the durable part's are summed over its worker processes. */
  readonly heap: number
  readonly rss: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  /**
   * The soak's own forced full GC before reading the heap, in ms (memory part; 0 for durable).
   * It blocks the event loop, so runs due meanwhile start late by up to this much: a p99 near
   * it is the measurement's cost, not the scheduler's.
   */
  readonly gcMs: number
}
const rows: Array<Row> = []
/** Forces a full GC (with `--expose-gc`) and returns how long it blocked, in ms. */
const gc = (): number => {
  const t = performance.now()
  ;(globalThis as { gc?: () => void }).gc?.()
  return performance.now() - t
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const a = s.address()
      s.close(() => resolve(typeof a === "object" && a !== null ? a.port : 0))
    })
  })

const scripts = fileURLToPath(new URL("../../../durable/scripts/", import.meta.url))
const t0 = Date.now()
const deadline = t0 + minutes * 60_000
const mb = (b: number) => (b / 1048576).toFixed(1)
const line = (r: Row) =>
  `${r.part.padEnd(8)} ${String(((r.w + 1) * WINDOW_MS) / 1000).padStart(6)} s ${String(r.runs).padStart(9)} ${mb(r.heap).padStart(9)} ${mb(r.rss).padStart(9)} ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)} ${String(r.max).padStart(7)} ${r.gcMs.toFixed(0).padStart(6)}`
console.log(
  `soak: ${minutes} min; ${runMemory ? `memory: ${memoryTasks} tasks at 1 s` : "no memory part"}; ${runDurable ? `durable: ${durableTasks} tasks at ${durablePeriodS} s on ${workerCount} workers` : "no durable part"}`,
)
console.log("part       window      runs   heap MB    rss MB p50 ms  p99 ms  max ms  gc ms")
const emit = (r: Row) => {
  rows.push(r)
  console.log(line(r))
}

// ------------------------------------------------------------------ the in-memory part
const memoryPart = Effect.gen(function* () {
  let lateness = new Lateness()
  const scheduler = yield* Scheduler.make({
    workers: 256,
    listener: { started: (run) => lateness.add(run.startedAt - run.scheduledFor) },
  })
  for (let k = 0; k < memoryTasks; k++) {
    yield* scheduler.schedule({
      id: `m${k}`,
      schedule: Schedule.fixedRate(1_000, { delay: 1_000 + (k % 1_000) }),
      job: Effect.void,
    })
  }
  let w = Math.floor((Date.now() - t0) / WINDOW_MS)
  while (t0 + (w + 1) * WINDOW_MS <= deadline) {
    yield* Effect.sleep(Math.max(0, t0 + (w + 1) * WINDOW_MS - Date.now()))
    const l = lateness
    lateness = new Lateness()
    const gcMs = gc()
    const m = process.memoryUsage()
    emit({
      part: "memory",
      w,
      runs: l.n,
      heap: m.heapUsed,
      rss: m.rss,
      p50: l.quantile(0.5),
      p99: l.quantile(0.99),
      max: l.quantile(1),
      gcMs,
    })
    w++
  }
})

// ------------------------------------------------------------------ the durable part
const children: Array<ChildProcess> = []
let pgDir: string | undefined
const durablePart = Effect.gen(function* () {
  let url = process.env.DATABASE_URL
  if (url === undefined || url === "") {
    const printed = execFileSync(
      "bash",
      [join(scripts, "pg-up.sh"), String(yield* Effect.promise(freePort))],
      {
        encoding: "utf8",
        env: { ...process.env, PG_OPTS: "-c fsync=off" },
        stdio: ["ignore", "pipe", "inherit"],
      },
    )
    url = /DATABASE_URL=(\S+)/.exec(printed)?.[1]
    pgDir = /PGDIR=(\S+)/.exec(printed)?.[1]
    if (url === undefined) throw new Error(`pg-up.sh printed no URL: ${printed}`)
  }
  const dbUrl = url
  // Accepted by a scheduler that claims nothing; the workers run them.
  const seed = Handler.make("soak", Schema.Struct({}), () => Effect.void)
  yield* Effect.scoped(
    Effect.gen(function* () {
      const api = yield* DurableScheduler.DurableScheduler
      for (let from = 0; from < durableTasks; from += 1_000) {
        yield* api.scheduleAll(
          Array.from({ length: Math.min(1_000, durableTasks - from) }, (_, j) => {
            const k = from + j
            return {
              id: `d${k}`,
              handler: seed,
              payload: {},
              schedule: Schedule.fixedRate(durablePeriodS * 1_000, {
                delay: 2_000 + ((k * 997) % (durablePeriodS * 1_000)),
              }),
            }
          }),
        )
      }
    }).pipe(
      Effect.provide(
        DurableScheduler.layer({ handlers: [seed], claim: false }).pipe(
          Layer.provide(Postgres.layer({ url: dbUrl, maxConnections: 2 })),
        ),
      ),
    ),
  )
  const byWindow = new Map<number, { heap: number; rss: number; lat: Lateness; seen: number }>()
  const tsx = createRequire(import.meta.url).resolve("tsx")
  const worker = fileURLToPath(new URL("./worker.ts", import.meta.url))
  for (let k = 0; k < workerCount; k++) {
    const c = spawn(
      process.execPath,
      [
        "--expose-gc",
        "--conditions=@tickwork/source",
        "--import",
        tsx,
        worker,
        dbUrl,
        `soak${k}`,
        String(t0),
        String(WINDOW_MS),
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    )
    children.push(c)
    let buffer = ""
    c.stdout?.on("data", (d: Buffer) => {
      buffer += String(d)
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const text = buffer.slice(0, nl)
        buffer = buffer.slice(nl + 1)
        if (!text.startsWith("{")) continue
        const r = JSON.parse(text) as {
          w: number
          heap: number
          rss: number
          lat: Array<[number, number]>
        }
        const acc = byWindow.get(r.w) ?? { heap: 0, rss: 0, lat: new Lateness(), seen: 0 }
        acc.heap += r.heap
        acc.rss += r.rss
        acc.lat.merge(r.lat)
        acc.seen++
        byWindow.set(r.w, acc)
        if (acc.seen === workerCount) {
          byWindow.delete(r.w)
          emit({
            part: "durable",
            w: r.w,
            runs: acc.lat.n,
            heap: acc.heap,
            rss: acc.rss,
            p50: acc.lat.quantile(0.5),
            p99: acc.lat.quantile(0.99),
            max: acc.lat.quantile(1),
            gcMs: 0,
          })
        }
      }
    })
  }
  // The workers report on their own; this part ends at the deadline, after their last window.
  yield* Effect.sleep(Math.max(0, deadline - Date.now() + 2_000))
})

const stopAll = () => {
  for (const c of children) c.kill("SIGKILL")
  if (pgDir !== undefined) {
    try {
      execFileSync("bash", [join(scripts, "pg-down.sh"), pgDir], { stdio: "ignore" })
    } catch {}
    pgDir = undefined
  }
}
// Whatever happens, the process ends shortly after the deadline.
setTimeout(
  () => {
    console.error("soak: still running 60 s past the deadline; stopping")
    stopAll()
    process.exit(1)
  },
  deadline - Date.now() + 60_000,
).unref()

const scope = await Effect.runPromise(Scope.make())
const exit = await Effect.runPromiseExit(
  Effect.all([runMemory ? memoryPart : Effect.void, runDurable ? durablePart : Effect.void], {
    concurrency: "unbounded",
  }).pipe(Scope.provide(scope)),
)
stopAll()
await Effect.runPromise(Scope.close(scope, Exit.void))
const summary = (part: Row["part"]) => {
  const r = rows.filter((x) => x.part === part && x.runs > 0)
  if (r.length === 0) return undefined
  // The first window holds the start-up (accepting, connecting): flat means from the second on.
  const steady = r.length > 1 ? r.slice(1) : r
  return {
    windows: r.length,
    heapMB: {
      first: Number(mb(steady[0]?.heap ?? 0)),
      last: Number(mb(steady[steady.length - 1]?.heap ?? 0)),
      max: Number(mb(Math.max(...steady.map((x) => x.heap)))),
    },
    rssMB: {
      first: Number(mb(steady[0]?.rss ?? 0)),
      last: Number(mb(steady[steady.length - 1]?.rss ?? 0)),
      max: Number(mb(Math.max(...steady.map((x) => x.rss)))),
    },
    p99ms: {
      median: steady.map((x) => x.p99).sort((a, b) => a - b)[Math.floor(steady.length / 2)],
      max: Math.max(...steady.map((x) => x.p99)),
    },
  }
}
const report = {
  startedAt: new Date(t0).toISOString(),
  minutes,
  windowMs: WINDOW_MS,
  node: process.version,
  memory: runMemory
    ? { tasks: memoryTasks, periodMs: 1_000, summary: summary("memory") }
    : undefined,
  durable: runDurable
    ? {
        tasks: durableTasks,
        periodMs: durablePeriodS * 1_000,
        workers: workerCount,
        summary: summary("durable"),
      }
    : undefined,
  rows,
}
writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`)
console.log(`soak: memory ${JSON.stringify(report.memory?.summary)}`)
console.log(`soak: durable ${JSON.stringify(report.durable?.summary)}`)
console.log(`soak: figures in ${out}`)
if (Exit.isFailure(exit)) {
  console.error(String(exit.cause))
  process.exit(1)
}
process.exit(0)
