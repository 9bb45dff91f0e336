/**
 * A store with a known history for the store commands' tests: six tasks in every state, seeded
 * by a real durable scheduler (owner `worker-a`). On SQLite under `TestClock` the runs happen in
 * virtual time from 2026-12-01T09:00:00Z, so every time the commands print is known; on
 * PostgreSQL the tasks are only scheduled and controlled (no runs), in real time.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Schedule } from "@tickwork/core"
import { DurableScheduler, Handler, Postgres, Sqlite, type TaskStore } from "@tickwork/durable"
import { Effect, type Layer, Schema } from "effect"
import { TestClock } from "effect/testing"

/** When the SQLite history starts (virtual time). */
export const T0 = Date.UTC(2026, 11, 1, 9, 0, 0)

const made = new Set<string>()
process.once("exit", () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** A fresh directory; its `tasks.db` path. */
export const tempStore = (): { readonly file: string; readonly cleanup: () => void } => {
  const dir = mkdtempSync(join(tmpdir(), "tickwork-cli-"))
  made.add(dir)
  return {
    file: join(dir, "tasks.db"),
    cleanup: () => {
      rmSync(dir, { recursive: true, force: true })
      made.delete(dir)
    },
  }
}

/** The handlers the seeded tasks name. */
export const handlers = [
  Handler.make("crm.sync", Schema.Struct({ account: Schema.String }), () => Effect.void),
  Handler.make("report.build", Schema.Struct({}), () => Effect.void),
  Handler.make("mail.send", Schema.Struct({ to: Schema.String }), () => Effect.void),
  Handler.make("legacy.import", Schema.Struct({}), () => Effect.fail("upstream answered 503")),
] as const

/** Lets work the test started finish (see the durable package's README, Testing). */
const settle = (d: DurableScheduler.DurableSchedulerShape) =>
  Effect.gen(function* () {
    for (let k = 0; k < 10_000 && !(yield* d.idle); k++) yield* Effect.yieldNow
  })

/**
 * Schedules the six tasks; with `run`, moves the TestClock 3 minutes so they run, then pauses
 * `cleanup` and cancels `old-export`.
 */
export const seed = (
  store: Layer.Layer<TaskStore.TaskStore, unknown>,
  options: { readonly run: boolean },
): Effect.Effect<void, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      if (options.run) yield* TestClock.setTime(T0)
      const { durable: d } = yield* DurableScheduler.make({
        handlers: [...handlers],
        owner: "worker-a",
        claim: options.run,
      })
      yield* d.schedule({
        id: "sync-crm",
        handler: "crm.sync",
        payload: { account: "acme" },
        schedule: Schedule.fixedRate(60_000),
      })
      yield* d.schedule({
        id: "nightly-report",
        handler: "report.build",
        payload: {},
        schedule: Schedule.cron("0 2 * * *", { timeZone: "Europe/Berlin" }),
      })
      yield* d.schedule({
        id: "welcome-ada",
        handler: "mail.send",
        payload: { to: "ada@example.com" },
        schedule: Schedule.once(30_000),
      })
      yield* d.schedule({
        id: "import-legacy",
        handler: "legacy.import",
        payload: {},
        schedule: Schedule.once(10_000),
        retry: { maxRetries: 1, base: 1_000 },
      })
      yield* d.schedule({
        id: "cleanup",
        handler: "crm.sync",
        payload: { account: "all" },
        schedule: Schedule.fixedDelay(300_000),
      })
      yield* d.schedule({
        id: "old-export",
        handler: "mail.send",
        payload: { to: "ops@example.com" },
        schedule: Schedule.once(3_600_000),
      })
      if (options.run) {
        yield* settle(d)
        yield* TestClock.adjust(180_000)
        yield* settle(d)
      }
      yield* d.pause("cleanup")
      yield* d.cancel("old-export")
    }),
  ).pipe(Effect.provide(store))

/** A SQLite store layer on `file` (shared, as the CLI opens it beside). */
export const sqlite = (file: string): Layer.Layer<TaskStore.TaskStore, unknown> =>
  Sqlite.layer({ filename: file })

/** A PostgreSQL store layer. */
export const postgres = (url: string): Layer.Layer<TaskStore.TaskStore, unknown> =>
  Postgres.layer({ url, maxConnections: 2 })
