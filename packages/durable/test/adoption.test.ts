/**
 * Issue 25's story, played on both stores: a service declares its recurring tasks at boot
 * (SPEC §18): the first boot creates them — on PostgreSQL three processes booting at once, one
 * create per id and no error (SPEC §18.5) — a later boot with a changed declaration updates in
 * place (same id and generation, ledger kept, an `updated` event), and a boot with unchanged
 * declarations writes nothing (SPEC §18.1). A charge whose handler fails ends failed; `retry`
 * gives it a new attempt (SPEC §19.2), which succeeds and whose result is kept and read back
 * (SPEC §19.3). The daily digest is triggered (SPEC §19.1): it runs once now, told it is a manual
 * run, recorded in its ledger, its 03:00 grid as it was after, and its lateness not counted.
 * The durable worker's metrics are scraped by a real Prometheus and show the
 * pending tasks, the retries, the skipped slots and tasks by state under the `handler` label, and
 * the failures are in the log with no option set.
 *
 * SQLite runs on the TestClock (exact counts); PostgreSQL on the real clock (completions commit
 * on the store's own schedule), waiting on conditions with generous bounds.
 */

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Metrics, Prometheus } from "@tickwork/runtime"
import * as RealPrometheus from "@tickwork/testkit/Prometheus"
import { Clock, Effect, Layer, Logger, ManagedRuntime, Metric, Option, Schema } from "effect"
import { type DurableScheduler, Handler, Postgres, type TaskStore } from "../src/index.ts"
import { advance, sqlite, tempDir, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

/** One registry for both stories, served to the real Prometheus through one endpoint. */
const registry = new Map()
let endpoint: ManagedRuntime.ManagedRuntime<Prometheus.Endpoint, unknown> | undefined
let prometheus: RealPrometheus.Server | undefined

beforeAll(async () => {
  endpoint = ManagedRuntime.make(
    Prometheus.layer({ port: 0, host: "127.0.0.1" }).pipe(
      Layer.provide(Layer.succeed(Metric.MetricRegistry, registry)),
    ),
  )
  const { port } = await endpoint.runPromise(Effect.service(Prometheus.Endpoint))
  prometheus = await RealPrometheus.start({ targets: [`127.0.0.1:${port}`] })
}, 180_000)

afterAll(async () => {
  await prometheus?.stop()
  await endpoint?.dispose()
}, 60_000)

/** Waits (real time, 120 s bound) until Prometheus has scraped each `[series, value]`. */
const scraped = (expected: ReadonlyArray<readonly [string, number]>) =>
  Effect.promise(() =>
    RealPrometheus.poll(`the scrape of ${JSON.stringify(expected)}`, 120_000, async () => {
      if (prometheus === undefined) throw new Error("Prometheus did not start")
      const got: Array<[string, number | undefined]> = []
      for (const [series] of expected) {
        const result = await prometheus.query(series)
        got.push([series, result.length === 1 ? Number(result[0]?.value[1]) : undefined])
      }
      if (got.every(([, v], k) => v === expected[k]?.[1])) return got
      throw new Error(`scraped ${JSON.stringify(got)}`)
    }),
  )

/** The charge fails while `gate.fail`; a success returns its receipt, kept (SPEC §19.3). */
const gate = { fail: true }
const Receipt = Schema.Struct({ charged: Schema.Number })
const charge = Handler.make(
  "charge",
  Schema.Struct({ cents: Schema.Number }),
  (p) => (gate.fail ? Effect.fail("card declined") : Effect.succeed({ charged: p.cents })),
  { result: Receipt },
)
/** The report runs 35 ms: at a 10 ms period, slots pass while it runs. */
const report = Handler.make("report", Schema.Struct({ n: Schema.Number }), () => Effect.sleep(35))
/** Every digest run's `RunInfo.manual`, in order: its grid is 03:00, so only a trigger runs it. */
const digestRuns: Array<boolean | undefined> = []
const digest = Handler.make("digest", Schema.Struct({}), (_, run) =>
  Effect.sync(() => {
    digestRuns.push(run.manual)
  }),
)
const handlers = [charge, report, digest]

/** The service's declared tasks; version 2 changes the report's payload. */
const declared = (reportPeriod: number, n: number) => [
  { id: "digest", handler: digest, payload: {}, schedule: Schedule.cron("0 3 * * *") },
  {
    id: "report",
    handler: report,
    payload: { n },
    schedule: Schedule.fixedRate(reportPeriod),
    missedRuns: "skip" as const,
  },
]

/** A task's pending run: what a trigger leaves as it found it (SPEC §19.1). */
const pendingRun = (d: DurableScheduler.DurableSchedulerShape, id: string) =>
  Effect.map(d.info(id), (o) =>
    Option.map(o, (i) => ({ slot: i.slot, dueAt: i.scheduledFor, attempt: i.attempt })),
  )

const empty = { created: [], updated: [], unchanged: [], cancelled: [] }

/** Every declared task's row and ledger length, as the scheduler reports them. */
const snapshot = (d: DurableScheduler.DurableSchedulerShape) =>
  Effect.forEach(["digest", "report"], (id) =>
    Effect.all([d.info(id), Effect.map(d.ledger(id), (l) => l.length)]),
  )

interface Store {
  /** The scheduler's name: the `scheduler` label of its series. */
  readonly name: string
  readonly layer: Layer.Layer<TaskStore.TaskStore, unknown>
  /** The report's period: 10 ms on the TestClock; a day on the real one (no slot passes). */
  readonly reportPeriod: number
  /** How many processes boot at once the first time. */
  readonly fleet: number
  /**
   * Lets a phase's work happen: on the TestClock by moving it; on the real clock by waiting
   * until the phase's condition holds (the gauges need no wait: the scrape polls for them).
   * `retry` is also the digest's manual run.
   */
  readonly run: (
    d: DurableScheduler.DurableSchedulerShape,
    phase: "attempts" | "retry" | "gauges",
  ) => Effect.Effect<void, unknown>
}

const story = (store: Store) => {
  const logged: Array<string> = []
  const logger = Logger.make((o) => {
    if (o.logLevel === "Warn" || o.logLevel === "Error") logged.push(String(o.message))
  })
  const boot = <A>(
    owner: string,
    body: (d: DurableScheduler.DurableSchedulerShape) => Effect.Effect<A, unknown>,
  ) =>
    withScheduler(
      store.layer,
      { handlers, owner, pollInterval: 60_000, runtime: { name: store.name } },
      body,
    )
  return Effect.gen(function* () {
    gate.fail = true
    digestRuns.length = 0
    // First boot: the fleet at once, the same declarations — one create per id, no error.
    const first = yield* Effect.all(
      Array.from({ length: store.fleet }, (_, k) =>
        boot(`p${k + 1}`, (d) => d.ensure(declared(store.reportPeriod, 1))),
      ),
      { concurrency: "unbounded" },
    )
    for (const id of ["digest", "report"] as const) {
      expect(first.filter((r) => r.created.includes(id as never)).length).toBe(1)
      expect(first.filter((r) => r.unchanged.includes(id as never)).length).toBe(store.fleet - 1)
    }

    // Second boot, a changed declaration: updated in place, the change recorded.
    const before = yield* boot("p1", snapshot)
    yield* boot("p1", (d) =>
      Effect.gen(function* () {
        expect(yield* d.ensure(declared(store.reportPeriod, 2))).toEqual({
          ...empty,
          updated: [{ id: "report", fields: ["payload"] }],
          unchanged: ["digest"],
        })
        const info = Option.getOrThrow(yield* d.info("report"))
        const was = Option.getOrThrow(before[1]?.[0] ?? Option.none())
        expect([info.id, info.generation, info.payload]).toEqual([
          "report",
          was.generation,
          { n: 2 },
        ])
        const ledger = yield* d.ledger("report")
        // Kept: every earlier entry is still there, followed by the update.
        expect(ledger.length).toBe((before[1]?.[1] ?? 0) + 1)
        expect(ledger.filter((o) => o.kind === "updated")).toMatchObject([
          { detail: "payload", cause: "ensure" },
        ])
      }),
    )

    // Third boot, unchanged: nothing written; then the day's work.
    yield* boot("p1", (d) =>
      Effect.gen(function* () {
        const kept = yield* snapshot(d)
        expect(yield* d.ensure(declared(store.reportPeriod, 2))).toEqual({
          ...empty,
          unchanged: ["digest", "report"],
        })
        expect(yield* snapshot(d)).toEqual(kept)

        yield* d.schedule({
          id: "charge",
          handler: charge,
          payload: { cents: 250 },
          schedule: Schedule.once(10),
          retry: { maxRetries: 1, base: 10 },
        })
        yield* store.run(d, "attempts")
        expect(yield* d.status("charge")).toBe("failed")
        gate.fail = false
        // Run now: the digest, due at 03:00, runs once outside its grid (SPEC §19.1).
        const grid = yield* pendingRun(d, "digest")
        const triggeredAfter = yield* Clock.currentTimeMillis
        yield* d.retry("charge")
        yield* d.trigger("digest")
        yield* store.run(d, "retry")
        expect(yield* d.status("charge")).toBe("done")
        expect(digestRuns).toEqual([true])
        expect(yield* pendingRun(d, "digest")).toEqual(grid)
        expect(yield* d.status("digest")).toBe("scheduled")
        const digestLedger = yield* d.ledger("digest")
        expect(digestLedger.filter((o) => o.kind === "manual-trigger")).toHaveLength(1)
        const manualRan = digestLedger.flatMap((o) => (o.kind === "ran" ? [o] : []))
        expect(manualRan.map((o) => [o.attempt, o.outcome])).toEqual([[1, "succeeded"]])
        // Its slot is the trigger's instant, not a slot of the grid.
        expect(manualRan[0]?.slot).toBeGreaterThanOrEqual(triggeredAfter)
        expect(manualRan[0]?.slot).not.toBe(Option.getOrThrow(grid).slot)
        const digestSeries = Metrics.forScheduler(store.name, "digest")
        expect((yield* Metric.value(digestSeries.runs.succeeded)).count).toBe(1)
        expect((yield* Metric.value(digestSeries.lateness)).count).toBe(0)
        const ran = (yield* d.ledger("charge")).flatMap((o) => (o.kind === "ran" ? [o] : []))
        expect(ran.map((o) => [o.attempt, o.outcome])).toEqual([
          [1, "failed"],
          [2, "failed"],
          [3, "succeeded"],
        ])
        expect(ran[2]).toMatchObject({ result: '{"charged":250}', value: { charged: 250 } })

        // The report stops; the gauges re-read the store (at most every 5 s) on both clocks.
        yield* d.cancel("report")
        yield* store.run(d, "gauges")

        const labels = `scheduler="${store.name}"`
        yield* scraped([
          [`tickwork_tasks_pending{${labels}}`, 1],
          [`tickwork_tasks{${labels},state="scheduled"}`, 1],
          [`tickwork_tasks{${labels},state="done"}`, 1],
          [`tickwork_tasks{${labels},state="cancelled"}`, 1],
          [`tickwork_tasks{${labels},state="failed"}`, 0],
          [`tickwork_retries_total{${labels},handler="charge"}`, 1],
          [`tickwork_runs_total{${labels},handler="charge",outcome="failed"}`, 2],
          [`tickwork_runs_total{${labels},handler="charge",outcome="succeeded"}`, 1],
          [`tickwork_runs_total{${labels},handler="digest",outcome="succeeded"}`, 1],
          [`tickwork_run_lateness_seconds_count{${labels},handler="digest"}`, 0],
          ...(store.reportPeriod === 10
            ? [
                [
                  `tickwork_slots_missed_total{${labels},handler="report",cause="overlap",policy="skip"}`,
                  3,
                ] as const,
              ]
            : []),
        ])
      }),
    )
    // Both failed attempts logged, with no option set.
    expect(logged.filter((l) => l.includes("tickwork run failed (task charge")).length).toBe(2)
  }).pipe(
    Effect.provideService(Metric.MetricRegistry, registry),
    Effect.provide(Logger.layer([logger])),
  )
}

describe("adopting tickwork: declared tasks, retry, results, a scraped durable worker", () => {
  it.effect(
    "on SQLite, in virtual time",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        yield* story({
          name: "story-sqlite",
          layer: sqlite(t.file()),
          reportPeriod: 10,
          fleet: 1,
          run: (d, phase) =>
            phase === "attempts"
              ? // 40 ms: the charge's two attempts (10, 20) and the report's slots 0-40.
                Effect.repeat(advance(d, 10), { times: 3 })
              : phase === "retry"
                ? advance(d, 0)
                : Effect.andThen(advance(d, 5_000), advance(d, 5_000)),
        })
        t.cleanup()
      }),
    240_000,
  )

  it.live(
    "on PostgreSQL, three processes booting at once, in real time",
    () =>
      Effect.gen(function* () {
        const db = yield* Effect.promise(() => freshDatabase())
        yield* story({
          name: "story-pg",
          layer: Postgres.layer({ url: db.url }),
          reportPeriod: 86_400_000,
          fleet: 3,
          run: (d, phase) =>
            phase === "gauges"
              ? Effect.void
              : Effect.gen(function* () {
                  const want = phase === "attempts" ? "failed" : "done"
                  // The retry phase also waits for the digest's manual run to be recorded.
                  const digestRan = Effect.map(d.ledger("digest"), (l) =>
                    phase === "attempts" ? true : l.some((o) => o.kind === "ran"),
                  )
                  const bound = Date.now() + 60_000
                  while (
                    ((yield* d.status("charge")) !== want || !(yield* digestRan)) &&
                    Date.now() < bound
                  ) {
                    yield* Effect.sleep(20)
                  }
                }),
        })
        yield* Effect.promise(() => db.drop())
      }),
    240_000,
  )
})
