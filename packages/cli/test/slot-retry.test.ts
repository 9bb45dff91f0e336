/**
 * A failed slot of a recurring task retried from the CLI and the dashboard (SPEC §19.7), on a
 * SQLite store seeded in virtual time: `tickwork retry <id> --slot` gives the slot one more
 * attempt; the dashboard's `POST /api/retry` takes an optional `slot` (epoch ms or ISO 8601),
 * answers a refusal with core's sentence as `refused`, and a bad slot with the typed error naming
 * it. The page's buttons are checked in headless Chromium by dashboard.test.ts.
 */
import { request } from "node:http"
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { DurableScheduler, Handler, StoreAdmin } from "@tickwork/durable"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as Dashboard from "../src/Dashboard.ts"
import { sqlite, T0, tempStore } from "./store.ts"
import { tickwork } from "./support.ts"

const FAILED = T0 + 60_000
const TOKEN = "test-token-0123456789abcdef"

/** `sync` runs every minute from T0 and fails its 09:01 slot once; `import` fails for good. */
const seeded = (file: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const sync = Handler.make("crm.sync", Schema.Struct({}), (_, run) =>
        run.slot === FAILED && run.attempt === 1
          ? Effect.fail("upstream answered 503")
          : Effect.void,
      )
      const legacy = Handler.make("legacy.import", Schema.Struct({}), () => Effect.fail("gone"))
      const { durable: d } = yield* DurableScheduler.make({
        handlers: [sync, legacy],
        owner: "worker-a",
      })
      yield* d.schedule({
        id: "sync",
        handler: sync,
        payload: {},
        schedule: Schedule.fixedRate(60_000),
      })
      yield* d.schedule({
        id: "import",
        handler: legacy,
        payload: {},
        schedule: Schedule.once(10_000),
      })
      for (let k = 0; k < 10_000 && !(yield* d.idle); k++) yield* Effect.yieldNow
      // 09:00, 09:01 (failed) and 09:02 run; the next slot is 09:03.
      yield* TestClock.adjust(150_000)
      for (let k = 0; k < 10_000 && !(yield* d.idle); k++) yield* Effect.yieldNow
    }),
  ).pipe(Effect.provide(sqlite(file)))

/** One POST to the dashboard on 127.0.0.1:port from its own origin, with the token. */
const post = (port: number, path: string, body: unknown) =>
  Effect.promise(
    () =>
      new Promise<{ readonly status: number; readonly body: Record<string, unknown> }>(
        (resolve, reject) => {
          const text = JSON.stringify(body)
          const req = request(
            {
              host: "127.0.0.1",
              port,
              method: "POST",
              path,
              headers: {
                host: `127.0.0.1:${port}`,
                origin: `http://127.0.0.1:${port}`,
                "content-type": "application/json",
                "x-tickwork-token": TOKEN,
              },
            },
            (res) => {
              let data = ""
              res.on("data", (d) => {
                data += String(d)
              })
              res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(data) }))
            },
          )
          req.on("error", reject)
          req.end(text)
        },
      ),
  )

describe("retry of one slot (SPEC §19.7)", () => {
  it.effect("tickwork retry <id> --slot gives the failed slot one more attempt now", () =>
    Effect.gen(function* () {
      const t = tempStore()
      yield* seeded(t.file)
      const out = yield* tickwork(
        "retry",
        "sync",
        "--slot",
        "2026-12-01T09:01:00Z",
        "--store",
        t.file,
      )
      expect(out.code).toBe(0)
      expect(out.stdout).toBe(
        'retried slot 2026-12-01T09:01:00.000Z of "sync": it runs again now; its next run stays as it was',
      )
      const status = JSON.parse(
        (yield* tickwork("status", "sync", "--store", t.file, "--json")).stdout,
      ) as StoreAdmin.TaskDetails
      expect(status).toMatchObject({ state: "scheduled", slot: FAILED, attempt: 2 })
      const ledger = (yield* tickwork("ledger", "sync", "--store", t.file)).stdout
      expect(ledger).toContain("manual-retry by cli")
      // A second one while it waits is refused with core's reason, and changes nothing.
      const again = yield* tickwork("retry", "sync", "--slot", String(FAILED), "--store", t.file)
      expect(again.stdout).toBe(
        `not retried: cannot retry slot ${FAILED} of "sync": a manual run of it is already waiting to start`,
      )
      t.cleanup()
    }),
  )

  it.effect("the dashboard's POST /api/retry takes a slot; a refusal carries core's sentence", () =>
    Effect.gen(function* () {
      const t = tempStore()
      yield* seeded(t.file)
      const answers = yield* Effect.scoped(
        Effect.gen(function* () {
          const served = yield* Dashboard.serve({
            store: t.file,
            port: 0,
            allowActions: true,
            token: TOKEN,
          })
          const p = served.port
          return {
            succeeded: yield* post(p, "/api/retry", { id: "sync", slot: T0 + 120_000 }),
            bad: yield* post(p, "/api/retry", { id: "sync", slot: "nope" }),
            fraction: yield* post(p, "/api/retry", { id: "sync", slot: 1.5 }),
            notRetry: yield* post(p, "/api/pause", { id: "sync", slot: FAILED }),
            retried: yield* post(p, "/api/retry", { id: "sync", slot: "2026-12-01T09:01:00Z" }),
            waiting: yield* post(p, "/api/retry", { id: "sync", slot: FAILED }),
            task: yield* post(p, "/api/retry", { id: "import" }),
            notFailed: yield* post(p, "/api/retry", { id: "import" }),
          }
        }),
      )
      // The 09:02 slot succeeded: refused, with the reason, nothing changed.
      expect(answers.succeeded).toEqual({
        status: 200,
        body: {
          id: "sync",
          changed: false,
          state: "scheduled",
          pausedReason: null,
          refused: `cannot retry slot ${T0 + 120_000} of "sync": its last run of slot ${T0 + 120_000} (attempt 1) succeeded: only a failed slot can be retried`,
        },
      })
      expect(answers.bad.status).toBe(400)
      expect(answers.bad.body).toMatchObject({ field: "slot", value: "nope" })
      expect(answers.fraction.status).toBe(400)
      expect(answers.fraction.body).toMatchObject({ field: "slot", value: "1.5" })
      expect(answers.notRetry).toEqual({
        status: 400,
        body: { error: "slot applies to retry only, not to pause" },
      })
      expect(answers.retried).toEqual({
        status: 200,
        body: { id: "sync", changed: true, state: "scheduled", pausedReason: null },
      })
      expect(answers.waiting.body).toMatchObject({
        changed: false,
        refused: `cannot retry slot ${FAILED} of "sync": a manual run of it is already waiting to start`,
      })
      // Without a slot, the failed task's retry as before (SPEC §19.2); then it is not failed.
      expect(answers.task.body).toMatchObject({ id: "import", changed: true, state: "scheduled" })
      expect(answers.notFailed.body).toMatchObject({ changed: false })
      expect(String(answers.notFailed.body.refused)).toContain("only a failed task can be retried")

      const events = yield* Effect.scoped(
        Effect.flatMap(StoreAdmin.open(t.file, { readOnly: true }), (admin) =>
          admin.ledger("sync"),
        ),
      )
      const retries = events.filter((o) => o.kind === "manual-retry")
      expect(retries).toHaveLength(1)
      expect(retries[0]).toMatchObject({ origin: "dashboard" })
      const status = yield* Effect.scoped(
        Effect.flatMap(StoreAdmin.open(t.file, { readOnly: true }), (admin) => admin.info("sync")),
      )
      expect(status).toMatchObject({ slot: FAILED, attempt: 2 })
      t.cleanup()
    }),
  )
})
