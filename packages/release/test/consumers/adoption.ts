/**
 * What a team moving from BullMQ or pg-boss writes on its first day, against the installed
 * packages only: an Effect service declaring its recurring tasks with `ensure` on a SQLite file,
 * started twice (`node adoption.mjs <file> 1`, then `… 2`: the second deployment changes the
 * digest's cron); run-now (`trigger`), a failing import retried by hand (`retry`), a charge whose
 * receipt is kept (`result`) and read back from the ledger; and `@tickwork/durable/testing` moving
 * a daily task through 30 virtual days. It prints one line per fact it checked; the release test
 * asserts them, and steers the same file with `npx tickwork` between the two starts.
 *
 * The tasks: `digest` (daily, 03:00 UTC; 03:30 from the second start) and `cleanup` (daily,
 * 04:00 UTC), both declared in the set `app`; `charge-42` and `import` (one-shots, now);
 * `sync-crm` (a one-shot that fails on the first start and is left `failed` for the CLI's
 * `retry`, and succeeds on the second start).
 */
import assert from "node:assert/strict"
import { Schedule } from "@tickwork/core"
import { DurableScheduler, Handler, Sqlite } from "@tickwork/durable"
import { TestDurable } from "@tickwork/durable/testing"
import { Effect, Layer, Option, Schema } from "effect"

const [filename, boot] = process.argv.slice(2)
if (filename === undefined || (boot !== "1" && boot !== "2"))
  throw new Error("usage: adoption.mjs <sqlite file> <1 | 2>")

/** Every run of a handler in this process: `id attempt manual`. */
const runs: Array<string> = []
const seen = (id: string, run: { readonly attempt: number; readonly manual?: boolean }) =>
  runs.push(`${id} ${run.attempt}${run.manual === true ? " manual" : ""}`)

const digest = Handler.make("digest", Schema.Struct({ to: Schema.String }), (_, run) =>
  Effect.sync(() => seen(run.id, run)),
)
const cleanup = Handler.make("cleanup", Schema.Struct({}), (_, run) =>
  Effect.sync(() => seen(run.id, run)),
)
/** Fails its first attempt (the upstream is down), then succeeds. */
const importer = Handler.make("import", Schema.Struct({ file: Schema.String }), (_, run) =>
  Effect.suspend(() => {
    seen(run.id, run)
    return run.attempt === 1 ? Effect.fail("upstream answered 503") : Effect.void
  }),
)
/** Fails on the first start (the CRM is down that day), succeeds on the second. */
const syncCrm = Handler.make("sync-crm", Schema.Struct({}), (_, run) =>
  Effect.suspend(() => {
    seen(run.id, run)
    return boot === "1" ? Effect.fail("crm unreachable") : Effect.void
  }),
)
const Receipt = Schema.Struct({ chargeId: Schema.String, cents: Schema.Number })
/** Charges a card; the receipt it returns is kept with the run (SPEC §19.3). */
const charge = Handler.make(
  "charge",
  Schema.Struct({ cents: Schema.Number }),
  (payload, run) =>
    Effect.sync(() => {
      seen(run.id, run)
      return { chargeId: `ch_${payload.cents}`, cents: payload.cents }
    }),
  { result: Receipt },
)
const handlers = [digest, cleanup, importer, syncCrm, charge]

/** The declarations of this deployment: the second changes the digest's hour. */
const declared = [
  {
    id: "digest",
    handler: digest,
    payload: { to: "team@example.com" },
    schedule: Schedule.cron(boot === "1" ? "0 3 * * *" : "30 3 * * *"),
  },
  { id: "cleanup", handler: cleanup, payload: {}, schedule: Schedule.cron("0 4 * * *") },
]

const live = DurableScheduler.layer({ handlers }).pipe(Layer.provide(Sqlite.layer({ filename })))

/** Polls `check` every 10 ms until it holds; a 60 s bound, then fails naming `what`. */
const until = <E>(what: string, check: Effect.Effect<boolean, E>) =>
  Effect.gen(function* () {
    const bound = Date.now() + 60_000
    while (!(yield* check)) {
      if (Date.now() > bound) return yield* Effect.die(new Error(`timed out waiting: ${what}`))
      yield* Effect.sleep("10 millis")
    }
  })

const program = Effect.gen(function* () {
  const tasks = yield* DurableScheduler.DurableScheduler
  const statusIs = (id: string, state: string) => Effect.map(tasks.status(id), (s) => s === state)
  const ranCount = (id: string) =>
    Effect.map(tasks.ledger(id), (l) => l.filter((o) => o.kind === "ran").length)
  const pending = (id: string) =>
    Effect.map(tasks.info(id), (o) => {
      const i = Option.getOrThrow(o)
      return { slot: i.slot, due: i.scheduledFor, attempt: i.attempt, generation: i.generation }
    })

  if (boot === "1") {
    const report = yield* tasks.ensure(declared, { set: "app" })
    console.log(`boot 1: created ${report.created.join(",")}`)

    // Run now: the digest once, its 03:00 grid as it was.
    const grid = yield* pending("digest")
    yield* tasks.trigger("digest")
    yield* until(
      "the digest's manual run",
      Effect.map(ranCount("digest"), (n) => n === 1),
    )
    const same = JSON.stringify(yield* pending("digest")) === JSON.stringify(grid)
    console.log(`trigger digest: ran "${runs.join("; ")}", next run unchanged: ${same}`)

    // A failing import, retried by hand once the upstream is back.
    yield* tasks.schedule({
      id: "import",
      handler: importer,
      payload: { file: "a.csv" },
      schedule: Schedule.once(0),
    })
    yield* until("the import to fail", statusIs("import", "failed"))
    yield* tasks.retry("import")
    yield* until("the retried import", statusIs("import", "done"))
    const attempts = (yield* tasks.ledger("import")).flatMap((o) =>
      o.kind === "ran" ? [`${o.attempt} ${o.outcome}`] : [],
    )
    console.log(`retry import: ${attempts.join(", ")}`)

    // A result: the receipt kept with the run, read back typed from the ledger.
    yield* tasks.schedule({
      id: "charge-42",
      handler: charge,
      payload: { cents: 4200 },
      schedule: Schedule.once(0),
    })
    yield* until("the charge", statusIs("charge-42", "done"))
    // `value` is `unknown` (a ledger holds any handler's runs), decoded already: the schema's
    // guard gives it its type back.
    const ran = (yield* tasks.ledger("charge-42")).flatMap((o) => (o.kind === "ran" ? [o] : []))
    const receipt = ran[0]?.value
    assert.ok(Schema.is(Receipt)(receipt))
    console.log(`charge-42 result: ${receipt.chargeId} for ${receipt.cents} cents`)

    // Left failed for the operator: `tickwork retry sync-crm` runs it on the next start.
    yield* tasks.schedule({
      id: "sync-crm",
      handler: syncCrm,
      payload: {},
      schedule: Schedule.once(0),
    })
    yield* until("sync-crm to fail", statusIs("sync-crm", "failed"))
    console.log(`sync-crm: ${yield* tasks.status("sync-crm")}`)
  } else {
    // The second deployment: the digest's cron changed in code, the cleanup did not.
    const before = yield* tasks.ledger("digest")
    const generation = (yield* pending("digest")).generation
    const report = yield* tasks.ensure(declared, { set: "app" })
    console.log(
      `boot 2: created [${report.created.join(",")}] updated [${report.updated
        .map((u) => `${u.id} (${u.fields.join(",")})`)
        .join(",")}] unchanged [${report.unchanged.join(",")}]`,
    )
    const info = Option.getOrThrow(yield* tasks.info("digest"))
    const after = yield* tasks.ledger("digest")
    const kept = JSON.stringify(after.slice(0, before.length)) === JSON.stringify(before)
    assert.equal(info.schedule.kind, "cron")
    const cron = info.schedule.kind === "cron" ? info.schedule.expression : "?"
    console.log(
      `digest: cron "${cron}", same generation: ${info.generation === generation}, ledger kept: ${kept}, then: ${after
        .slice(before.length)
        .map((o) => o.kind)
        .join(",")}`,
    )
    const ids = (yield* tasks.tasks()).map((t) => t.id)
    console.log(`tasks: ${ids.join(",")}`)

    // What the operator asked between the starts: the retry and the manual cleanup run here.
    yield* until("sync-crm's retry", statusIs("sync-crm", "done"))
    yield* until(
      "the cleanup's manual run",
      Effect.map(ranCount("cleanup"), (n) => n === 1),
    )
    console.log(`boot 2 ran: ${[...runs].sort().join("; ")}`)
  }
})

await Effect.runPromise(program.pipe(Effect.provide(live)))

if (boot === "1") {
  // The same daily digest in a test: 30 virtual days in a fraction of a real second.
  const delivered: Array<number> = []
  const daily = Handler.make("digest", Schema.Struct({ to: Schema.String }), (_, run) =>
    Effect.sync(() => void delivered.push(run.slot)),
  )
  await TestDurable.run(
    Effect.gen(function* () {
      const tasks = yield* DurableScheduler.DurableScheduler
      yield* tasks.ensure([
        {
          id: "digest",
          handler: daily,
          payload: { to: "team@example.com" },
          schedule: Schedule.cron("0 3 * * *"),
        },
      ])
      yield* TestDurable.advance("30 days")
    }),
    { handlers: [daily] },
  )
  console.log(
    `30 virtual days: ${delivered.length} digests, first ${new Date(delivered[0] ?? 0).toISOString()}`,
  )
}
console.log(`adoption ${boot}: ok`)
