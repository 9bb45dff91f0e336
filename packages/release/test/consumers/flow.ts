/**
 * Flow control as a team moving from graphile-worker, BullMQ or pg-boss tries it on its first
 * day, against the installed packages only (SPEC §20), each beside the option it replaces:
 *
 * - graphile-worker's `queueName` (a queue's jobs run in series): `limits.keys: { concurrency: 1 }`
 *   and a task's `key`;
 * - BullMQ's `limiter: { max, duration }`: a group's `rate`, with the waiting run's cause on view;
 * - BullMQ's worker `concurrency`, fleet-wide: `limits.handlers.<name>.concurrency`;
 * - pg-boss's `singletonKey` and graphile-worker's `jobKey` replace: `scheduleDeduplicated` with
 *   `dedup` modes `singleton` and `debounce`;
 * - a bad limit: a typed `InvalidOption` naming the field and the value.
 *
 * In virtual time (`@tickwork/durable/testing`), then on a SQLite file on the real clock, where a
 * rate-limited run is left waiting for the operator's `tickwork status` (`node flow.mjs <file>`).
 * It prints one line per fact it saw; the release test asserts them.
 */
import { Schedule } from "@tickwork/core"
import { DurableScheduler, Handler, Sqlite } from "@tickwork/durable"
import { TestDurable } from "@tickwork/durable/testing"
import { Effect, Layer, Option, Schema } from "effect"

const [filename] = process.argv.slice(2)
if (filename === undefined) throw new Error("usage: flow.mjs <sqlite file>")

/** Starts seen by the handlers, `id@virtual ms`, in order. */
const starts: Array<string> = []
/** Runs of `send-email` in flight now, and the most there ever were. */
let sending = 0
let mostSending = 0
/** When each email started, virtual ms. */
const emailStarts: Array<number> = []

/** A customer's sync: 100 ms of work. */
const syncCustomer = Handler.make("sync-customer", Schema.Struct({}), (_, run) =>
  Effect.suspend(() => {
    starts.push(`${run.id}@${run.startedAt}`)
    return Effect.sleep("100 millis")
  }),
)
/** A call to a partner's API, which allows two calls a second. */
const callPartner = Handler.make("call-partner", Schema.Struct({}), (_, run) =>
  Effect.sync(() => void starts.push(`${run.id}@${run.startedAt}`)),
)
/** An email: 50 ms of work; the mail server takes two at once. */
const sendEmail = Handler.make("send-email", Schema.Struct({ to: Schema.String }), (_, run) =>
  Effect.gen(function* () {
    emailStarts.push(run.startedAt)
    sending++
    mostSending = Math.max(mostSending, sending)
    yield* Effect.sleep("50 millis")
    sending--
  }),
)
/** The nightly report: at most one pending. */
const report = Handler.make("report", Schema.Struct({ day: Schema.String }), () => Effect.void)
const handlers = [syncCustomer, callPartner, sendEmail, report]

const limits = {
  handlers: { "send-email": { concurrency: 2 } },
  groups: { partner: { rate: { max: 2, per: "1 second" } } },
  keys: { concurrency: 1 },
} as const

/** Started ids of `prefix`, with their start times. */
const startsOf = (prefix: string) => starts.filter((s) => s.startsWith(prefix)).join(" ")

await TestDurable.run(
  Effect.gen(function* () {
    const tasks = yield* DurableScheduler.DurableScheduler

    // A named queue per customer: each customer's syncs one at a time, customers side by side.
    for (const [id, key] of [
      ["c42-a", "customer-42"],
      ["c42-b", "customer-42"],
      ["c42-c", "customer-42"],
      ["c7-a", "customer-7"],
    ] as const) {
      yield* tasks.schedule({
        id,
        handler: syncCustomer,
        payload: {},
        schedule: Schedule.once(0),
        key,
      })
    }
    yield* TestDurable.advance("1 second")
    console.log(`series per key: ${startsOf("c42")} | ${startsOf("c7")}`)

    // A rate limit: five calls due now, two a second.
    const asked = yield* TestDurable.now
    for (let i = 1; i <= 5; i++) {
      yield* tasks.schedule({
        id: `call-${i}`,
        handler: callPartner,
        payload: {},
        schedule: Schedule.once(0),
        group: "partner",
      })
    }
    yield* TestDurable.advance("500 millis")
    const waiting = Option.getOrThrow(yield* tasks.info("call-3")).waiting
    const stats = yield* tasks.stats
    console.log(
      `call-3 waits: ${waiting?.cause} on ${waiting?.scope} until +${(waiting?.until ?? 0) - asked} ms; waiting by cause: ${JSON.stringify(stats.waiting)}`,
    )
    yield* TestDurable.advance("3 seconds")
    console.log(`rate, from +${asked} ms: ${startsOf("call")}`)

    // A handler's concurrency: eight emails, two at once.
    for (let i = 1; i <= 8; i++) {
      yield* tasks.schedule({
        handler: sendEmail,
        payload: { to: `user${i}@example.com` },
        schedule: Schedule.once(0),
      })
    }
    const from = yield* TestDurable.now
    yield* TestDurable.advance("1 second")
    console.log(
      `emails: at most ${mostSending} at once, started at +${emailStarts.map((t) => t - from).join(" ")} ms`,
    )

    // Deduplication keys: a singleton keeps the first request; a debounce moves the pending one.
    const nightly = (day: string, mode: "singleton" | "debounce", delay: number) =>
      tasks.scheduleDeduplicated({
        handler: report,
        payload: { day },
        schedule: Schedule.once(delay),
        dedup: { key: `report-${mode}`, mode },
      })
    const s1 = yield* nightly("mon", "singleton", 60_000)
    const s2 = yield* nightly("tue", "singleton", 60_000)
    console.log(`singleton: ${s1.outcome}, then ${s2.outcome} (same task: ${s1.id === s2.id})`)
    const d1 = yield* nightly("mon", "debounce", 60_000)
    const due1 = Option.getOrThrow(yield* tasks.info(d1.id)).scheduledFor
    yield* TestDurable.advance("10 seconds")
    const d2 = yield* nightly("tue", "debounce", 60_000)
    const moved = Option.getOrThrow(yield* tasks.info(d2.id))
    console.log(
      `debounce: ${d1.outcome}, then ${d2.outcome} (same task: ${d1.id === d2.id}), moved +${moved.scheduledFor - due1} ms, payload ${JSON.stringify(moved.payload)}`,
    )
  }),
  { handlers, limits },
)

// A bad limit: the layer is not built, and the error names the field and the value.
const bad = await Effect.runPromise(
  Effect.flip(
    Effect.provide(
      Effect.gen(function* () {
        yield* DurableScheduler.DurableScheduler
      }),
      DurableScheduler.layer({
        handlers,
        limits: { groups: { partner: { concurrency: 0 } } },
      }).pipe(Layer.provide(Sqlite.layer({ filename: ":memory:" }))),
    ),
  ),
)
console.log(`bad limit: ${bad._tag}: ${"field" in bad ? `${bad.field} = ${bad.value}` : bad}`)

// On a file, on the real clock: one call a minute; the second waits, for the operator to see.
const live = DurableScheduler.layer({
  handlers,
  limits: { groups: { partner: { rate: { max: 1, per: "1 minute" } } } },
}).pipe(Layer.provide(Sqlite.layer({ filename })))
await Effect.runPromise(
  Effect.gen(function* () {
    const tasks = yield* DurableScheduler.DurableScheduler
    for (const id of ["live-1", "live-2"]) {
      yield* tasks.schedule({
        id,
        handler: callPartner,
        payload: {},
        schedule: Schedule.once(0),
        group: "partner",
      })
    }
    const bound = Date.now() + 60_000
    let info = Option.getOrThrow(yield* tasks.info("live-2"))
    while (info.waiting === undefined || (yield* tasks.status("live-1")) !== "done") {
      if (Date.now() > bound) throw new Error("live-2 never waited")
      yield* Effect.sleep("10 millis")
      info = Option.getOrThrow(yield* tasks.info("live-2"))
    }
    console.log(`live-2 waits: ${info.waiting?.cause} on ${info.waiting?.scope}`)
  }).pipe(Effect.provide(live)),
)
console.log("flow: ok")
