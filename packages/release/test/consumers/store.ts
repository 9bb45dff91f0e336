/**
 * A program using the installed `@tickwork/durable` to fill a store for the packed CLI to read:
 * `node store.mjs <sqlite file | postgres URL>` schedules two tasks and exits. The scheduler
 * claims nothing (`claim: false`), so both tasks stay `scheduled` with the due times given here,
 * whatever the machine's speed.
 */
import { Schedule } from "@tickwork/core"
import { DurableScheduler, Handler, Postgres, Sqlite } from "@tickwork/durable"
import { Effect, Layer, Schema } from "effect"

const target = process.argv[2]
if (target === undefined) throw new Error("usage: store.mjs <sqlite file | postgres URL>")

const report = Handler.make(
  "report.build",
  Schema.Struct({ day: Schema.String }),
  () => Effect.void,
)
const mail = Handler.make("mail.send", Schema.Struct({ to: Schema.String }), () => Effect.void)
const store = /^postgres(ql)?:\/\//.test(target)
  ? Postgres.layer({ url: target })
  : Sqlite.layer({ filename: target })
const live = DurableScheduler.layer({ handlers: [report, mail], claim: false }).pipe(
  Layer.provide(store),
)

await Effect.runPromise(
  Effect.gen(function* () {
    const tasks = yield* DurableScheduler.DurableScheduler
    yield* tasks.schedule({
      id: "nightly-report",
      handler: report,
      payload: { day: "today" },
      schedule: Schedule.cron("0 2 * * *", { timeZone: "Europe/Berlin" }),
    })
    yield* tasks.schedule({
      id: "welcome-ada",
      handler: mail,
      payload: { to: "ada@example.com" },
      // Due long after the nightly slot, so the two are listed in this order at any hour.
      schedule: Schedule.once("30 days"),
    })
  }).pipe(Effect.provide(live)),
)
console.log("store: ok")
