// tickwork quickstart: an Effect program that schedules a realistic mix of work, watches it run
// for ten seconds on the real clock, then shuts the scheduler down and summarises what happened
// from the occurrence ledger.
//
//   pnpm demo
//
// Read it top to bottom: each task shows one part of the API.
import { type Ledger, Main, Schedule, Scheduler, type Task } from "@tickwork/runtime"
import { Data, Effect, Schedule as EffectSchedule, Fiber, Logger, Option, Stream } from "effect"

class UpstreamUnavailable extends Data.TaggedError("UpstreamUnavailable")<{
  readonly attempt: number
}> {}

class MailDown extends Data.TaggedError("MailDown") {}

const RUN_FOR_MS = 10_000

const program = Effect.gen(function* () {
  const scheduler = yield* Scheduler.Scheduler
  const start = Date.now()

  // 1. A reminder: once, five seconds from now.
  yield* scheduler.schedule({
    id: "reminder",
    schedule: Schedule.once("5 seconds"),
    job: Effect.log("reminder: stand up and stretch"),
  })

  // 2. A token refresh every 2 s on a fixed grid (it never drifts, however long a refresh takes).
  let token = 0
  yield* scheduler.schedule({
    id: "token-refresh",
    schedule: Schedule.fixedRate("2 seconds"),
    priority: "high",
    job: Effect.sync(() => {
      token++
    }).pipe(Effect.andThen(Effect.sleep("120 millis"))),
  })

  // 3. A flaky call: fails twice, then succeeds; retried with exponential backoff and jitter.
  yield* scheduler.schedule({
    id: "flaky-call",
    schedule: Schedule.once("1 second"),
    retry: { maxRetries: 4, base: "400 millis", factor: 2, jitter: "equal" },
    job: (run) =>
      run.attempt < 3
        ? Effect.fail(new UpstreamUnavailable({ attempt: run.attempt }))
        : Effect.log(`flaky-call: answered on attempt ${run.attempt}`),
  })

  // 4. A cron job in a time zone: every third second (6 fields: seconds first).
  yield* scheduler.schedule({
    id: "cron-digest",
    schedule: Schedule.cron("*/3 * * * * *", { timeZone: "Europe/Berlin" }),
    missedRuns: "skip",
    job: Effect.sleep("50 millis"),
  })

  // 5. A long report that is cancelled while it runs: its fiber is interrupted.
  yield* scheduler.schedule({
    id: "long-report",
    schedule: Schedule.once("2 seconds"),
    timeout: "30 seconds",
    job: Effect.sleep("1 minute"),
  })
  yield* Effect.forkChild(
    Effect.sleep("3500 millis").pipe(
      Effect.andThen(scheduler.cancel("long-report", { interrupt: true })),
      Effect.andThen((cancelled) =>
        Effect.log(`long-report cancelled while running: ${cancelled}`),
      ),
    ),
  )

  // 6. A job that schedules a follow-up: an order, then its receipt 1.5 s later.
  yield* scheduler.schedule({
    id: "order",
    schedule: Schedule.once("1500 millis"),
    job: scheduler
      .schedule({
        id: "receipt",
        schedule: Schedule.once("1500 millis"),
        job: Effect.log("receipt sent"),
      })
      .pipe(Effect.orDie),
  })

  // 7. Two tasks share a circuit breaker ("smtp", defined on the layer below). The mail server
  //    is down for the first 2.5 s: two failed slots open the breaker and hold both tasks; after
  //    the 2 s cool-down one probe runs, succeeds, and the breaker closes — the held one-shot
  //    "welcome-mail" then runs instead of being lost.
  const mailUpAt = start + 2_500
  const sendMail = (what: string) =>
    Effect.suspend(() =>
      Date.now() < mailUpAt ? Effect.fail(new MailDown()) : Effect.log(`${what}: sent`),
    )
  yield* scheduler.schedule({
    id: "mail-digest",
    breaker: "smtp",
    schedule: Schedule.fixedRate("700 millis"),
    job: sendMail("mail-digest"),
  })
  yield* scheduler.schedule({
    id: "welcome-mail",
    breaker: "smtp",
    schedule: Schedule.once("2 seconds"),
    job: sendMail("welcome-mail"),
  })
  yield* Effect.forkChild(
    Stream.runForEach(scheduler.occurrences, (o) =>
      o.kind === "breaker" ? Effect.log(`breaker ${o.breaker}: ${o.from} → ${o.to}`) : Effect.void,
    ),
  )

  // A live table of every task, redrawn in place on a terminal, or printed every 2 s otherwise.
  const tty = process.stdout.isTTY === true
  const render = Effect.gen(function* () {
    const tasks = yield* scheduler.tasks()
    const rows: Array<string> = []
    for (const t of tasks) rows.push(yield* row(t, start))
    const header = `${"task".padEnd(14)}${"state".padEnd(11)}${"next slot".padEnd(11)}${"late".padEnd(7)}outcomes`
    const text = [`t = ${((Date.now() - start) / 1000).toFixed(1)} s`, header, ...rows].join("\n")
    yield* Effect.sync(() => {
      if (tty) process.stdout.write(`\x1b[H\x1b[J${text}\n`)
      else console.log(`${text}\n`)
    })
  })
  const row = (t: Task.TaskInfo, t0: number) =>
    Effect.map(scheduler.ledger(t.id), (ledger) => {
      const runs = ledger.filter((o): o is Ledger.Ran => o.kind === "ran" || o.kind === "retried")
      const last = runs.at(-1)
      const counts = new Map<string, number>()
      for (const o of ledger) {
        const key = o.kind === "ran" || o.kind === "retried" ? o.outcome.kind : o.kind
        counts.set(key, (counts.get(key) ?? 0) + 1)
      }
      const next = t.state === "scheduled" ? `+${((t.scheduledFor - t0) / 1000).toFixed(1)} s` : "-"
      const late = last === undefined ? "-" : `${last.startedAt - last.scheduledFor} ms`
      const outcomes = [...counts].map(([k, n]) => `${k}×${n}`).join(" ")
      return `${t.id.padEnd(14)}${t.state.padEnd(11)}${next.padEnd(11)}${late.padEnd(7)}${outcomes}`
    })
  if (tty) process.stdout.write("\x1b[2J")
  const table = yield* Effect.forkChild(
    Effect.repeat(render, EffectSchedule.spaced(tty ? "250 millis" : "2 seconds")),
  )
  yield* Effect.sleep(RUN_FOR_MS)
  yield* Fiber.interrupt(table)
  yield* render
  return { token, tasks: yield* scheduler.tasks() }
})

// The summary reads the ledger after the scheduler has shut down (policy "cancel": pending
// tasks are cancelled, running ones may finish).
const main = Effect.gen(function* () {
  const reports: Array<Scheduler.ShutdownReport> = []
  const { token, tasks, scheduler } = yield* Effect.scoped(
    Effect.gen(function* () {
      const result = yield* program
      return { ...result, scheduler: yield* Scheduler.Scheduler }
    }).pipe(
      Effect.provide(
        Scheduler.layer({
          workers: 4,
          shutdown: "cancel",
          breakers: { smtp: { failures: 2, coolDown: "2 seconds" } },
          onShutdown: (r) => reports.push(r),
        }),
      ),
    ),
  )
  // The service still answers queries after it has shut down: the ledger now includes the runs
  // that finished during the shutdown.
  console.log("\nsummary from the ledger")
  for (const { id } of tasks) {
    const ledger = yield* scheduler.ledger(id)
    const ran = ledger.filter((o) => o.kind === "ran").length
    const retried = ledger.filter((o) => o.kind === "retried").length
    const skipped = ledger.filter((o) => o.kind === "skipped").length
    const cancelled = ledger.some((o) => o.kind === "cancelled")
    const worst = Math.max(
      0,
      ...ledger.flatMap((o) =>
        o.kind === "ran" || o.kind === "retried" ? [o.startedAt - o.scheduledFor] : [],
      ),
    )
    console.log(
      `  ${id.padEnd(14)} ran ${ran}, retried ${retried}, skipped ${skipped}${cancelled ? ", cancelled" : ""}; worst lateness ${worst} ms`,
    )
  }
  const report = Option.getOrThrow(Option.fromNullishOr(reports[0]))
  console.log(
    `shutdown (${report.policy}): ${report.cancelled.length} cancelled, ${report.finished.length} finished, ${report.interrupted.length} interrupted; token refreshed ${token} times`,
  )
})

// runMain closes the scheduler's scope on SIGINT/SIGTERM too (Ctrl-C shuts it down under its
// policy), reports a failure and sets the exit code.
Main.runMain(main.pipe(Effect.provide(Logger.layer([Logger.consolePretty()]))))
