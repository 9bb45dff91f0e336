// The work the live view shows: a realistic mix, each task there for one thing to look at.
// Times are real milliseconds from the start, so everything interesting happens in the first
// few seconds and then keeps going.
import { type Errors, Schedule, type Scheduler } from "@tickwork/runtime"
import { Data, Effect, type Scope } from "effect"

class UpstreamUnavailable extends Data.TaggedError("UpstreamUnavailable")<{
  readonly message: string
}> {}

class DatabaseLocked extends Data.TaggedError("DatabaseLocked")<{ readonly message: string }> {}

class MailServerDown extends Data.TaggedError("MailServerDown")<{ readonly message: string }> {}

/**
 * The circuit breakers the demo's tasks share, for `Scheduler.make({ breakers })`: "smtp" opens
 * after 3 failed slots of its tasks in a row; its cool-down starts at 2 s and doubles each time
 * a probe fails, up to 6 s.
 */
export const breakers: NonNullable<Scheduler.SchedulerOptions["breakers"]> = {
  smtp: { failures: 3, coolDown: 2_000, factor: 2, maxCoolDown: 6_000 },
}

/**
 * The flow-control limits of the demo's groups (SPEC §20), for `Scheduler.make({ limits })`:
 * "exports" runs one run at a time (its two tasks take turns, so one of them is often waiting
 * on `concurrency`), and "webhooks" starts at most 2 runs in any 2 s (its task, due every
 * 0.4 s, waits `rate-limited` until its window opens).
 */
export const limits: NonNullable<Scheduler.SchedulerOptions["limits"]> = {
  groups: {
    exports: { concurrency: 1 },
    webhooks: { rate: { max: 2, per: 2_000 } },
  },
}

/** The mail server the "smtp" tasks need is down for the first 40 s of every minute. */
const MAIL_DOWN_MS = 40_000
const MAIL_CYCLE_MS = 60_000

/** What each task shows, by id (the page prints it under the task's name). */
export const descriptions: Readonly<Record<string, string>> = {
  heartbeat: "every 1 s, high priority · always fine",
  "flaky-sync": "every 2.5 s · every other slot fails twice, retried with backoff",
  "nightly-import": "every 1.5 s · always fails; paused after 2 failed slots",
  report: "once at 1 s · runs 8 s, cancelled at 2.5 s while running",
  "slow-poller": "every 0.6 s, runs 1.5 s · late slots coalesced",
  "metrics-rollup": "every 0.8 s, runs 1.9 s · late slots skipped",
  warmup: "once at 1.5 s · done",
  "cache-evict": "1.2 s after each run ends (fixed delay)",
  "timeout-prone": "every 2 s, 400 ms timeout · every other slot hangs, retried once",
  "ad-hoc": "a one-off, scheduled again under the same id once it is final · every third dies",
  backup: "every 1 s · paused by hand at 2 s, resumed at 5 s, paused again at 7 s",
  "mail-digest": "every 0.7 s, breaker smtp · the mail server is down 40 s a minute",
  "invoice-mail": "every 1.1 s, breaker smtp · held with mail-digest while it is open",
  // Its schedule in words comes from the live view (core's explain), not from here.
  "cron-tick": "a cron task · the line above is its expression in words",
  "export-orders": "every 1 s, runs 0.7 s, group exports (1 at a time) · waits for its turn",
  "export-invoices": "every 1 s, runs 0.7 s, group exports (1 at a time) · waits for its turn",
  "webhook-ping": "every 0.4 s, group webhooks (2 per 2 s) · waits for its rate window",
  reindex: "every 2 s, dedup key search-index (singleton) · asked again every 1.5 s, deduplicated",
}

/** A deterministic stand-in for work that takes a while: 30–90 ms. */
const jitter = (n: number) => 30 + ((n * 37) % 61)

/**
 * Schedules the demo's tasks on `scheduler`, and forks what cancels and reschedules them.
 * `onSchedule` hears each task's id and schedule just before it is scheduled (the live view's
 * `scheduled`, which says a cron task's expression in words).
 */
export const scheduleDemo = (
  scheduler: Scheduler.SchedulerShape,
  onSchedule: (id: string, schedule: Schedule.Schedule) => void = () => {},
): Effect.Effect<void, Errors.ScheduleError | Errors.SchedulerClosed, Scope.Scope> =>
  Effect.gen(function* () {
    const start = Date.now()
    const schedule = <A, E, R>(
      task: Scheduler.ScheduleOptions<A, E, R> & { readonly id: string },
    ) =>
      Effect.suspend(() => {
        onSchedule(task.id, task.schedule)
        return scheduler.schedule(task)
      })
    yield* schedule({
      id: "heartbeat",
      schedule: Schedule.fixedRate(1_000, { delay: 200 }),
      priority: "high",
      job: (run) => Effect.sleep(jitter(run.runNumber)),
    })

    // Every other slot's first two attempts fail; the third succeeds.
    let slots = 0
    yield* schedule({
      id: "flaky-sync",
      schedule: Schedule.fixedRate(2_500, { delay: 600 }),
      retry: { maxRetries: 3, base: 150, factor: 2 },
      job: (run) => {
        if (run.attempt === 1) slots++
        return slots % 2 === 1 && run.attempt <= 2
          ? Effect.fail(new UpstreamUnavailable({ message: "upstream answered 503" }))
          : Effect.sleep(jitter(run.runNumber) + 60)
      },
    })

    yield* schedule({
      id: "nightly-import",
      schedule: Schedule.fixedRate(1_500, { delay: 300 }),
      retry: { maxRetries: 1, base: 200 },
      pauseAfterConsecutiveFailures: 2,
      job: Effect.sleep(40).pipe(
        Effect.andThen(Effect.fail(new DatabaseLocked({ message: "database is locked" }))),
      ),
    })

    yield* schedule({
      id: "report",
      schedule: Schedule.once(1_000),
      job: Effect.sleep(8_000),
    })

    yield* schedule({
      id: "slow-poller",
      schedule: Schedule.fixedRate(600, { delay: 400 }),
      missedRuns: "coalesce",
      job: Effect.sleep(1_500),
    })

    yield* schedule({
      id: "metrics-rollup",
      schedule: Schedule.fixedRate(800, { delay: 500 }),
      missedRuns: "skip",
      job: Effect.sleep(1_900),
    })

    yield* schedule({
      id: "warmup",
      schedule: Schedule.once(1_500),
      job: Effect.sleep(200),
    })

    yield* schedule({
      id: "cache-evict",
      schedule: Schedule.fixedDelay(1_200, { delay: 100 }),
      job: (run) => Effect.sleep(100 + jitter(run.runNumber) * 2),
    })

    yield* schedule({
      id: "timeout-prone",
      schedule: Schedule.fixedRate(2_000, { delay: 700 }),
      timeout: 400,
      retry: { maxRetries: 1, base: 100 },
      job: (run) => Effect.sleep(run.attempt === 1 && run.runNumber % 4 === 1 ? 600 : 150),
    })

    // Cancel the report while it runs: the task is cancelled at once, its run goes on (a
    // cooperative cancel) and reports when it ends, which the final task ignores.
    yield* Effect.forkScoped(Effect.sleep(2_500).pipe(Effect.andThen(scheduler.cancel("report"))))

    // Paused by hand (reason "manual"): its slots that pass while paused are skipped, and resume
    // continues with the next slot rather than catching them up. The second pause stays.
    yield* schedule({
      id: "backup",
      schedule: Schedule.fixedRate(1_000, { delay: 250 }),
      job: (run) => Effect.sleep(jitter(run.runNumber) + 40),
    })
    yield* Effect.forkScoped(
      Effect.sleep(2_000).pipe(
        Effect.andThen(scheduler.pause("backup")),
        Effect.andThen(Effect.sleep(3_000)),
        Effect.andThen(scheduler.resume("backup")),
        Effect.andThen(Effect.sleep(2_000)),
        Effect.andThen(scheduler.pause("backup")),
      ),
    )

    // Two tasks share the "smtp" breaker (see `breakers`), and the mail server they need is down:
    // three failed slots in a row, across both, open it and hold both tasks (reason "breaker").
    // After each cool-down one of them runs as the probe; while the server is down the probe
    // fails and the breaker opens again, once it is back the probe succeeds and closes it.
    const sendMail = Effect.suspend(() =>
      (Date.now() - start) % MAIL_CYCLE_MS < MAIL_DOWN_MS
        ? Effect.sleep(30).pipe(
            Effect.andThen(Effect.fail(new MailServerDown({ message: "connection refused" }))),
          )
        : Effect.sleep(60),
    )
    yield* schedule({
      id: "mail-digest",
      schedule: Schedule.fixedRate(700, { delay: 300 }),
      breaker: "smtp",
      job: sendMail,
    })
    yield* schedule({
      id: "invoice-mail",
      schedule: Schedule.fixedRate(1_100, { delay: 500 }),
      breaker: "smtp",
      job: sendMail,
    })

    // A cron task with a seconds field, so it runs while the demo is watched: every 3 s.
    yield* schedule({
      id: "cron-tick",
      schedule: Schedule.cron("*/3 * * * * *"),
      job: (run) => Effect.sleep(jitter(run.runNumber)),
    })

    // Flow control (see `limits`): two tasks share a group that runs one at a time, so whichever
    // is due second waits on `concurrency`; a fast task in a rate-limited group waits for its
    // window (`rate-limited`, with the instant it opens).
    for (const id of ["export-orders", "export-invoices"]) {
      yield* schedule({
        id,
        schedule: Schedule.fixedRate(1_000, { delay: 350 }),
        group: "exports",
        job: Effect.sleep(700),
      })
    }
    yield* schedule({
      id: "webhook-ping",
      schedule: Schedule.fixedRate(400, { delay: 150 }),
      group: "webhooks",
      job: (run) => Effect.sleep(jitter(run.runNumber) / 3),
    })

    // A singleton under a deduplication key: asking for it again while it is live creates
    // nothing (a `deduplicated` occurrence on the holder).
    const reindex = {
      id: "reindex",
      schedule: Schedule.fixedRate(2_000, { delay: 800 }),
      dedup: { key: "search-index", mode: "singleton" as const },
      job: Effect.sleep(120),
    }
    yield* schedule(reindex)
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.sleep(1_500).pipe(Effect.andThen(Effect.ignore(scheduler.schedule(reindex)))),
      ),
    )

    // A one-off under a reused id: each time it is final, schedule it again (a new generation).
    let adHoc = 0
    const scheduleAdHoc = Effect.suspend(() => {
      const n = ++adHoc
      return schedule({
        id: "ad-hoc",
        schedule: Schedule.once(300),
        job: n % 3 === 0 ? Effect.die(new Error("bug in ad-hoc job")) : Effect.sleep(250),
      })
    })
    yield* scheduleAdHoc
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.sleep(2_000).pipe(
          Effect.andThen(scheduler.status("ad-hoc")),
          Effect.flatMap((state) =>
            state === "done" || state === "failed" || state === "cancelled"
              ? Effect.asVoid(Effect.ignore(scheduleAdHoc))
              : Effect.void,
          ),
        ),
      ),
    )
  })
