/**
 * A program using the installed `@tickwork/durable` on a SQLite file: a task scheduled with a
 * typed payload runs through its named handler, and the file, reopened by a new scheduler,
 * still knows the task and its run; and `@tickwork/durable/testing` runs a daily task over a
 * virtual month.
 */
import assert from "node:assert/strict"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Schedule } from "@tickwork/core"
import { DurableScheduler, Handler, Sqlite } from "@tickwork/durable"
import { TestDurable } from "@tickwork/durable/testing"
import { Effect, Fiber, Layer, Option, Schema, Stream } from "effect"

const dir = mkdtempSync(join(tmpdir(), "tickwork-durable-"))
const filename = join(dir, "tasks.db")

let delivered: (key: string) => void = () => {}
const ran = new Promise<string>((resolve) => {
  delivered = resolve
})
const greet = Handler.make("greet", Schema.Struct({ name: Schema.String }), (payload, run) =>
  Effect.sync(() => delivered(`${payload.name} ${run.key}`)),
)
const live = DurableScheduler.layer({ handlers: [greet] }).pipe(
  Layer.provide(Sqlite.layer({ filename })),
)

try {
  await Effect.runPromise(
    Effect.gen(function* () {
      const tasks = yield* DurableScheduler.DurableScheduler
      // The ledger's first record, published once the run's completion is committed.
      const first = yield* Effect.forkChild(Stream.runHead(tasks.occurrences), {
        startImmediately: true,
      })
      yield* tasks.schedule({
        id: "hello",
        handler: greet,
        payload: { name: "ada" },
        schedule: Schedule.once("20 millis"),
      })
      const key = yield* Effect.promise(() => ran).pipe(Effect.timeout("30 seconds"))
      assert.match(key, /^ada hello@\d+$/)
      const occurrence = yield* Fiber.join(first).pipe(Effect.timeout("30 seconds"))
      assert.equal(Option.getOrThrow(occurrence).kind, "ran")
      assert.equal(yield* tasks.status("hello"), "done")
    }).pipe(Effect.provide(live)),
  )
  // A new scheduler on the same file sees the finished task and its run.
  await Effect.runPromise(
    Effect.gen(function* () {
      const tasks = yield* DurableScheduler.DurableScheduler
      assert.equal(yield* tasks.status("hello"), "done")
      const ledger = yield* tasks.ledger("hello")
      assert.deepEqual(
        ledger.map((o) => o.kind),
        ["ran"],
      )
    }).pipe(Effect.provide(live)),
  )
} finally {
  rmSync(dir, { recursive: true, force: true })
}
{
  let runs = 0
  const daily = Handler.make("daily", Schema.Struct({}), () => Effect.sync(() => void runs++))
  await TestDurable.run(
    Effect.gen(function* () {
      const tasks = yield* DurableScheduler.DurableScheduler
      yield* tasks.schedule({ handler: daily, payload: {}, schedule: Schedule.fixedRate("1 day") })
      yield* TestDurable.advance("30 days")
    }),
    { handlers: [daily] },
  )
  assert.equal(runs, 31)
}
console.log("durable: ok")
