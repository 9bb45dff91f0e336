// The worker: a process that owns a SQLite task store and runs its tasks.
//
//   worker.ts <store file> <epoch ms the demo started> <run for ms>
//
// On a fresh store it schedules the demo's tasks; on a store that already has them (a restart)
// it schedules nothing: the tasks come back from the file. It prints every run and every
// ledger event as it happens, then closes after <run for ms> and prints a summary.
import { Schedule } from "@tickwork/core"
import { DurableScheduler, Handler, Sqlite } from "@tickwork/durable"
import { Main } from "@tickwork/runtime"
import { Effect, Fiber, Layer, References, Schema, Stream } from "effect"

const [file, startArg, runForArg] = process.argv.slice(2)
const demoStart = Number(startArg)
const runFor = Number(runForArg)
const at = (t: number) => `+${((t - demoStart) / 1000).toFixed(2)}s`

// Handlers are registered by name; a task names one and carries a payload checked by its schema.
const ping = Handler.make("ping", Schema.Struct({ target: Schema.String }), (p, run) =>
  Effect.sync(() =>
    console.log(
      `  ${at(run.startedAt)}  ran ${run.id.padEnd(8)} slot ${at(run.slot)}  late ${String(run.startedAt - run.scheduledFor).padStart(4)} ms  ${p.target}${run.delivery > 1 ? `  (delivery ${run.delivery}: it was running when the process died)` : ""}`,
    ),
  ),
)
// A slow job: 400 ms of work, idempotent on run.key (the same key on every delivery).
const report = Handler.make("report", Schema.Struct({ pages: Schema.Int }), (p, run) =>
  Effect.gen(function* () {
    console.log(
      `  ${at(run.startedAt)}  report   slot ${at(run.slot)} started (${p.pages} pages, delivery ${run.delivery})`,
    )
    yield* Effect.sleep("400 millis")
    console.log(`  ${at(Date.now())}  report   slot ${at(run.slot)} finished (key ${run.key})`)
  }),
)

const program = Effect.gen(function* () {
  const d = yield* DurableScheduler.DurableScheduler
  const stats = yield* d.stats
  const existing = stats.tasks.scheduled + stats.tasks.running
  if (existing === 0) {
    console.log(`worker ${process.pid}: fresh store, scheduling 5 tasks`)
    yield* d.scheduleAll([
      {
        id: "heart",
        handler: ping,
        payload: { target: "every second (catch-up)" },
        schedule: Schedule.fixedRate(1_000),
      },
      {
        id: "digest",
        handler: ping,
        payload: { target: "every 700 ms (coalesce)" },
        schedule: Schedule.fixedRate(700),
        missedRuns: "coalesce",
      },
      {
        id: "gauge",
        handler: ping,
        payload: { target: "every 900 ms (skip)" },
        schedule: Schedule.fixedRate(900),
        missedRuns: "skip",
      },
      {
        id: "report",
        handler: report,
        payload: { pages: 12 },
        schedule: Schedule.fixedRate(2_000, { delay: 1_900 }),
      },
      {
        id: "reminder",
        handler: ping,
        payload: { target: "once, at +3.5 s" },
        schedule: Schedule.at(demoStart + 3_500),
      },
    ])
  } else {
    console.log(
      `worker ${process.pid}: reopened the store: ${stats.tasks.scheduled} tasks scheduled, ${stats.recovered} run(s) cut off by the crash due again`,
    )
  }
  // Slots skipped or coalesced as runs end, as they are recorded.
  const events = yield* Stream.runForEach(d.occurrences, (o) =>
    o.kind === "ran"
      ? Effect.void
      : Effect.sync(() => console.log(`  ${at(o.at)}  ${describe(o)}`)),
  ).pipe(Effect.forkChild)
  yield* Effect.sleep(runFor)
  yield* Fiber.interrupt(events)
  console.log(`worker ${process.pid}: closing. What each task's ledger says:`)
  for (const id of ["heart", "digest", "gauge", "report", "reminder"]) {
    const ledger = yield* d.ledger(id)
    const runs = ledger.filter((o) => o.kind === "ran").length
    const other = ledger.flatMap((o) => (o.kind === "ran" ? [] : [describe(o)]))
    console.log(
      `  ${id.padEnd(8)} ${runs} runs${other.length === 0 ? "" : `; ${other.join("; ")}`}`,
    )
  }
})

const describe = (o: Exclude<DurableScheduler.DurableOccurrence, { kind: "ran" }>): string =>
  `${o.kind} ${o.taskId}: ${o.count} slot(s) ${at(o.firstSlot)}${o.count > 1 ? `…${at(o.lastSlot)}` : ""}${
    o.cause === null ? "" : ` (${o.cause})`
  }`

// runMain closes the scope on SIGINT/SIGTERM: the worker releases its claims for another process.
// Main.runMain exits 0 after SIGTERM and a clean shutdown (a stop, not a failure), 130 on Ctrl-C.
Main.runMain(
  program.pipe(
    Effect.provide(
      DurableScheduler.layer({
        handlers: [ping, report],
        workers: 4,
        shutdownTimeout: "1 second",
      }).pipe(Layer.provide(Sqlite.layer({ filename: file as string, lockTimeoutMs: 2_000 }))),
    ),
    // Quiet the scheduler's own info logs: this program prints what happens.
    Effect.provideService(References.MinimumLogLevel, "Warn"),
  ),
)
