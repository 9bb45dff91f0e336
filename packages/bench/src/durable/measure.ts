/**
 * The durable store's measurements, each beside a raw baseline on the same table shape measured
 * in the same run: better-sqlite3 used directly, and PostgreSQL through the same driver
 * (`@effect/sql-pg`) without the scheduler. Every function returns one trial's figures; the
 * bench package repeats them and prints the tables (`pnpm bench --parts 6`).
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { Schedule } from "@tickwork/core"
import { DurableScheduler, Handler, Postgres, Sqlite, type TaskStore } from "@tickwork/durable"
import Database from "better-sqlite3"
import { Deferred, Effect, type Layer, References, Schema } from "effect"
import { freshDatabase, type Server, withClient } from "./postgres.ts"

const HOUR = 3_600_000

const noop = Handler.make("noop", Schema.Struct({ n: Schema.Number }), () => Effect.void)

/** Runs `f` with a durable scheduler on `store`, closing both afterwards. */
const withDurable = <A>(
  store: Layer.Layer<TaskStore.TaskStore, unknown>,
  options: DurableScheduler.DurableSchedulerOptions<typeof noop>,
  f: (d: DurableScheduler.DurableSchedulerShape) => Effect.Effect<A, unknown>,
): Promise<A> =>
  run(
    Effect.scoped(Effect.flatMap(DurableScheduler.make(options), ({ durable }) => f(durable))).pipe(
      Effect.provide(store),
    ) as Effect.Effect<A, unknown>,
  )

/** Runs an effect with the scheduler's info logs silenced (stdout holds the bench's tables). */
const run = <A>(effect: Effect.Effect<A, unknown>): Promise<A> =>
  Effect.runPromise(effect.pipe(Effect.provideService(References.MinimumLogLevel, "Warn")))

/** A one-shot task of the no-op handler, due at `at`. */
const task = (k: number, at: number): DurableScheduler.DurableTaskOptions<typeof noop> => ({
  id: `t${k}`,
  handler: noop,
  payload: { n: k },
  schedule: Schedule.at(at),
})

/** The row `schedule` writes for `task(k, at)`, for the raw baselines. */
const row = (k: number, at: number, now: number) => ({
  id: `t${k}`,
  generation: 1,
  handler: "noop",
  payload: `{"n":${k}}`,
  schedule: `{"kind":"once","at":${at}}`,
  priority: 1,
  retry: '{"maxRetries":0,"base":1000,"factor":2,"maxDelay":9007199254740991,"jitter":"none"}',
  missed_runs: "catch-up",
  pause_after: 0,
  timeout_ms: 0,
  state: "scheduled",
  slot: at,
  run_at: at,
  due_at: at,
  attempt: 1,
  run_number: 0,
  consecutive_failures: 0,
  deliveries: 0,
  fence: 0,
  lease_owner: null,
  seq: now * 1000 + k,
  created_at: now,
  updated_at: now,
  finished_at: null,
  last_error: null,
})
const COLUMNS = Object.keys(row(0, 0, 0))

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "tickwork-bench-"))
  return {
    file: (name: string) => join(dir, name),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  }
}

/** An empty migrated SQLite store file, for a raw baseline to write into. */
const migratedFile = async (file: string): Promise<void> => {
  await withDurable(
    Sqlite.layer({ filename: file }),
    { handlers: [noop], claim: false },
    () => Effect.void,
  )
}

/** Figures of one trial: the durable scheduler's and the raw baseline's. */
export interface Pair {
  readonly durable: number
  readonly raw: number
  /**
   * The same rates per second of this process's CPU time (user + system) instead of wall time,
   * where measured: on a shared machine other tenants move wall time far more than CPU time.
   */
  readonly durableCpu?: number | undefined
  readonly rawCpu?: number | undefined
}

/** This process's CPU time so far, seconds (user + system). */
const cpuSeconds = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

// ------------------------------------------------------------------------------ schedule

/** Tasks/s: `schedule()` one at a time (a commit each) vs raw single-row INSERTs, SQLite. */
export const sqliteSchedule = async (
  n: number,
  synchronous: "NORMAL" | "FULL" = "NORMAL",
): Promise<Pair> => {
  const t = tempDir()
  try {
    const durable = await withDurable(
      Sqlite.layer({ filename: t.file("d.db"), synchronous }),
      { handlers: [noop], claim: false },
      (d) =>
        Effect.gen(function* () {
          const now = Date.now()
          const c0 = cpuSeconds()
          const t0 = performance.now()
          for (let k = 0; k < n; k++) yield* d.schedule(task(k, now + HOUR))
          return { wall: n / ((performance.now() - t0) / 1000), cpu: n / (cpuSeconds() - c0) }
        }),
    )
    await migratedFile(t.file("r.db"))
    const db = new Database(t.file("r.db"))
    db.pragma("journal_mode = WAL")
    db.pragma(`synchronous = ${synchronous}`)
    const insert = db.prepare(
      `INSERT INTO tickwork_tasks (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map((c) => `@${c}`).join(", ")})`,
    )
    const now = Date.now()
    const c0 = cpuSeconds()
    const t0 = performance.now()
    for (let k = 0; k < n; k++) insert.run(row(k, now + HOUR, now))
    const raw = n / ((performance.now() - t0) / 1000)
    const rawCpu = n / (cpuSeconds() - c0)
    db.close()
    return { durable: durable.wall, raw, durableCpu: durable.cpu, rawCpu }
  } finally {
    t.cleanup()
  }
}

/** Tasks/s: `scheduleAll` of n in one transaction vs raw INSERTs in one transaction, SQLite. */
export const sqliteScheduleAll = async (n: number): Promise<Pair> => {
  const t = tempDir()
  try {
    const durable = await withDurable(
      Sqlite.layer({ filename: t.file("d.db") }),
      { handlers: [noop], claim: false },
      (d) =>
        Effect.gen(function* () {
          const now = Date.now()
          const list = Array.from({ length: n }, (_, k) => task(k, now + HOUR))
          const c0 = cpuSeconds()
          const t0 = performance.now()
          yield* d.scheduleAll(list)
          return { wall: n / ((performance.now() - t0) / 1000), cpu: n / (cpuSeconds() - c0) }
        }),
    )
    await migratedFile(t.file("r.db"))
    const db = new Database(t.file("r.db"))
    db.pragma("journal_mode = WAL")
    const insert = db.prepare(
      `INSERT INTO tickwork_tasks (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map((c) => `@${c}`).join(", ")})`,
    )
    const now = Date.now()
    const c0 = cpuSeconds()
    const t0 = performance.now()
    db.transaction(() => {
      for (let k = 0; k < n; k++) insert.run(row(k, now + HOUR, now))
    })()
    const raw = n / ((performance.now() - t0) / 1000)
    const rawCpu = n / (cpuSeconds() - c0)
    db.close()
    return { durable: durable.wall, raw, durableCpu: durable.cpu, rawCpu }
  } finally {
    t.cleanup()
  }
}

/** Tasks/s on PostgreSQL: `schedule()` one at a time vs raw autocommit INSERTs; or batched. */
export const pgSchedule = async (server: Server, n: number, batch: boolean): Promise<Pair> => {
  const d1 = await freshDatabase(server)
  const d2 = await freshDatabase(server)
  try {
    const durable = await withDurable(
      Postgres.layer({ url: d1.url }),
      { handlers: [noop], claim: false },
      (d) =>
        Effect.gen(function* () {
          const now = Date.now()
          const list = Array.from({ length: n }, (_, k) => task(k, now + HOUR))
          const t0 = performance.now()
          if (batch) yield* d.scheduleAll(list)
          else for (const o of list) yield* d.schedule(o)
          return n / ((performance.now() - t0) / 1000)
        }),
    )
    await withDurable(
      Postgres.layer({ url: d2.url }),
      { handlers: [noop], claim: false },
      () => Effect.void,
    )
    const raw = await withClient(d2.url, (sql) =>
      Effect.gen(function* () {
        const now = Date.now()
        const rows = Array.from({ length: n }, (_, k) => row(k, now + HOUR, now))
        const t0 = performance.now()
        if (batch) {
          yield* sql.withTransaction(
            Effect.forEach(
              Array.from({ length: Math.ceil(n / 400) }, (_, c) =>
                rows.slice(c * 400, c * 400 + 400),
              ),
              (chunk) =>
                sql`INSERT INTO tickwork_tasks ${sql.insert(chunk as [(typeof rows)[number]])}`,
              { discard: true },
            ),
          )
        } else {
          for (const r of rows) yield* sql`INSERT INTO tickwork_tasks ${sql.insert(r)}`
        }
        return n / ((performance.now() - t0) / 1000)
      }),
    )
    return { durable, raw }
  } finally {
    await d1.drop()
    await d2.drop()
  }
}

// ------------------------------------------------------------------------------ restart

/**
 * Restart with n pending tasks: ms from opening the store to the first due task running (the
 * durable scheduler loads nothing: it claims what is due), vs the raw cost of reading every
 * pending row in due order (what rebuilding an in-memory heap at start would read).
 */
export const restart = async (
  kind: "sqlite" | "pg",
  server: Server | undefined,
  n: number,
): Promise<Pair & { readonly seedMs: number }> => {
  const t = tempDir()
  const db = kind === "pg" ? await freshDatabase(server as Server) : undefined
  const store = () =>
    kind === "pg"
      ? Postgres.layer({ url: (db as { url: string }).url })
      : Sqlite.layer({ filename: t.file("s.db") })
  try {
    const s0 = performance.now()
    await withDurable(store(), { handlers: [noop], claim: false }, (d) =>
      Effect.gen(function* () {
        const now = Date.now()
        // n pending in the next hour, and one due now: the first run after the restart.
        yield* d.scheduleAll(
          Array.from({ length: n }, (_, k) => task(k, now + 60_000 + (k % HOUR))),
        )
        yield* d.schedule({ ...task(n, now), id: "first" })
      }),
    )
    const seedMs = performance.now() - s0
    const t0 = performance.now()
    const durable = await run(
      Effect.scoped(
        Effect.gen(function* () {
          const ran = yield* Deferred.make<number>()
          const first = Handler.make("noop", Schema.Struct({ n: Schema.Number }), () =>
            Deferred.succeed(ran, performance.now()),
          )
          yield* DurableScheduler.make({ handlers: [first] })
          return (yield* Deferred.await(ran)) - t0
        }),
      ).pipe(Effect.provide(store())) as Effect.Effect<number, unknown>,
    )
    let raw: number
    if (kind === "sqlite") {
      const t1 = performance.now()
      const sdb = new Database(t.file("s.db"))
      const rows = sdb
        .prepare(
          "SELECT id, due_at FROM tickwork_tasks WHERE state IN ('scheduled', 'running') ORDER BY due_at",
        )
        .all()
      raw = performance.now() - t1
      sdb.close()
      if (rows.length < n) throw new Error(`read ${rows.length} rows`)
    } else {
      raw = await withClient((db as { url: string }).url, (sql) =>
        Effect.gen(function* () {
          const t1 = performance.now()
          const rows = yield* sql`SELECT id, due_at FROM tickwork_tasks
            WHERE state IN ('scheduled', 'running') ORDER BY due_at`
          if (rows.length < n) throw new Error(`read ${rows.length} rows`)
          return performance.now() - t1
        }),
      )
    }
    return { durable, raw, seedMs }
  } finally {
    t.cleanup()
    await db?.drop()
  }
}

// ------------------------------------------------------------------------------ two processes

const claimer = fileURLToPath(new URL("./claimer.ts", import.meta.url))

/** Starts a claimer process; resolves once it prints "ready". */
const startClaimer = (
  url: string,
  mode: string,
  owner: string,
  workers: number,
  env: Record<string, string>,
  onLine: (line: string) => void,
) => {
  const p = spawn(
    process.execPath,
    [
      ...process.execArgv.filter((a) => a !== "--expose-gc"),
      claimer,
      url,
      mode,
      owner,
      String(workers),
    ],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, ...env },
    },
  )
  let ready: () => void = () => {}
  const started = new Promise<void>((resolve) => {
    ready = resolve
  })
  createInterface({ input: p.stdout }).on("line", (line) =>
    line === "ready" ? ready() : onLine(line),
  )
  const exited = new Promise<void>((resolve) => p.once("exit", () => resolve()))
  return { process: p, started, exited }
}

const waitFor = async (check: () => Promise<boolean>, ms: number, what: string) => {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * Runs/s with two processes claiming n due rows: from the moment they are due to the last one
 * completed. `mode` is `durable` (two DurableSchedulers, `workers` each) or a raw baseline.
 */
export const twoProcesses = async (
  server: Server,
  n: number,
  mode: "durable" | "durable-limit" | "durable-limit-32" | "raw-1" | "raw-50",
  workers = 64,
): Promise<number> => {
  const db = await freshDatabase(server)
  try {
    const dueAt = Date.now() + 4_000
    await withDurable(Postgres.layer({ url: db.url }), { handlers: [noop], claim: false }, (d) =>
      d.scheduleAll(Array.from({ length: n }, (_, k) => task(k, dueAt))),
    )
    const children = [
      startClaimer(db.url, mode, "A", workers, {}, () => {}),
      startClaimer(db.url, mode, "B", workers, {}, () => {}),
    ]
    await Promise.all(children.map((c) => c.started))
    if (Date.now() > dueAt) throw new Error("the claimers started after the rows were due")
    const done = async () => {
      const [r] = await withClient(
        db.url,
        (sql) =>
          sql<{ n: string }>`SELECT count(*)::text AS n FROM tickwork_tasks WHERE state = 'done'`,
      )
      return Number(r?.n) >= n
    }
    await waitFor(done, 120_000, "every run")
    const elapsed = Date.now() - dueAt
    for (const c of children) c.process.kill("SIGKILL")
    await Promise.all(children.map((c) => c.exited))
    return n / (elapsed / 1000)
  } finally {
    await db.drop()
  }
}

// ------------------------------------------------------------------------------ lateness

/** Lateness figures of one trial, ms. */
export interface Lateness {
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly runs: number
}

const figures = (values: Array<number>): Lateness => {
  values.sort((a, b) => a - b)
  const at = (q: number) =>
    values[Math.min(values.length - 1, Math.max(0, Math.ceil(q * values.length) - 1))] ?? Number.NaN
  return {
    p50: at(0.5),
    p99: at(0.99),
    max: values[values.length - 1] ?? Number.NaN,
    runs: values.length,
  }
}

/**
 * Real-clock lateness (startedAt − slot) of n one-shot tasks with slots uniform over
 * `windowMs`, all scheduled before the window opens: one SQLite process, or two PostgreSQL
 * processes (poll 200 ms) fed by a third that only schedules.
 */
export const lateness = async (
  kind: "sqlite" | "pg",
  server: Server | undefined,
  n: number,
  windowMs: number,
): Promise<Lateness> => {
  const values: Array<number> = []
  const opens = Date.now() + 3_000
  const slots = Array.from({ length: n }, (_, k) => opens + Math.floor((k * windowMs) / n))
  if (kind === "sqlite") {
    const t = tempDir()
    try {
      await run(
        Effect.scoped(
          Effect.gen(function* () {
            const all = yield* Deferred.make<void>()
            const h = Handler.make("noop", Schema.Struct({ n: Schema.Number }), (_, run) =>
              Effect.suspend(() => {
                values.push(run.startedAt - run.scheduledFor)
                return values.length === n ? Deferred.succeed(all, undefined) : Effect.void
              }),
            )
            const { durable } = yield* DurableScheduler.make({ handlers: [h], workers: 8 })
            yield* durable.scheduleAll(slots.map((s, k) => ({ ...task(k, s), handler: h })))
            yield* Deferred.await(all)
          }),
        ).pipe(Effect.provide(Sqlite.layer({ filename: t.file("l.db") }))) as Effect.Effect<
          void,
          unknown
        >,
      )
    } finally {
      t.cleanup()
    }
    return figures(values)
  }
  const db = await freshDatabase(server as Server)
  try {
    const env = { LATENESS: "1" }
    const onLine = (line: string) => {
      if (line.startsWith("late ")) values.push(Number(line.slice(5)))
    }
    const children = [
      startClaimer(db.url, "durable", "A", 32, env, onLine),
      startClaimer(db.url, "durable", "B", 32, env, onLine),
    ]
    await Promise.all(children.map((c) => c.started))
    await withDurable(Postgres.layer({ url: db.url }), { handlers: [noop], claim: false }, (d) =>
      d.scheduleAll(slots.map((s, k) => task(k, s))),
    )
    await waitFor(async () => values.length >= n, 60_000, "every run")
    for (const c of children) c.process.kill("SIGKILL")
    await Promise.all(children.map((c) => c.exited))
    return figures(values)
  } finally {
    await db.drop()
  }
}
