/**
 * The store commands, run in-process: on SQLite in virtual time (a seeded history whose every
 * time is known, so whole outputs are compared), and on PostgreSQL in real time (outcomes and
 * shapes). Each command's table and `--json`, the filters, the controls (they change the store
 * as the scheduler's own would), and bad input: typed errors naming the field and the value,
 * exit code 1, nothing changed.
 */
import { createHash } from "node:crypto"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { DurableScheduler, type StoreAdmin } from "@tickwork/durable"
import { Cause, Effect, Layer, Option } from "effect"
import { CliError } from "effect/cli"
import { TestClock } from "effect/testing"
import { printable, printableJson } from "../src/internal/printable.ts"
import * as Store from "../src/Store.ts"
import { ledgerTable, table } from "../src/Store.ts"
import { freshDatabase } from "./pg.ts"
import { handlers, postgres, seed, sqlite, T0, tempStore } from "./store.ts"
import { lines, type Outcome, tickwork } from "./support.ts"

/** The typed error a failed run carries as the cause of its `UserError`. */
const typedError = (outcome: Outcome): Record<string, unknown> => {
  expect(outcome.code).toBe(1)
  expect(outcome.exit._tag).toBe("Failure")
  if (outcome.exit._tag !== "Failure") return {}
  const error = Option.getOrUndefined(Cause.findErrorOption(outcome.exit.cause))
  expect(error).toBeInstanceOf(CliError.UserError)
  return (error as CliError.UserError).cause as Record<string, unknown>
}

/** A seeded SQLite store for one test (virtual time, runs included). */
const withSeeded = <A, E>(body: (file: string) => Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const t = tempStore()
    yield* seed(sqlite(t.file), { run: true })
    return yield* body(t.file).pipe(Effect.ensuring(Effect.sync(t.cleanup)))
  })

const json = <A>(out: Outcome): A => {
  expect(out.code).toBe(0)
  return JSON.parse(out.stdout) as A
}

const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex")

describe("tasks (SQLite)", () => {
  it.effect("lists every task as a table: live ones in due order, then finished ones", () =>
    withSeeded((file) =>
      Effect.gen(function* () {
        const out = yield* tickwork("tasks", "--store", file)
        expect(out.code).toBe(0)
        expect(lines(out)).toEqual([
          "ID              STATE            HANDLER        SCHEDULE                        DUE / ENDED           RUNS  OWNER  TAGS",
          "sync-crm        scheduled        crm.sync       every 1m                        2026-12-01T09:04:00Z  4     -      -",
          "cleanup         paused (manual)  crm.sync       every 5m after end              2026-12-01T09:05:00Z  1     -      -",
          'nightly-report  scheduled        report.build   cron "0 2 * * *" Europe/Berlin  2026-12-02T01:00:00Z  0     -      -',
          "old-export      cancelled        mail.send      once                            2026-12-01T09:03:00Z  0     -      -",
          "welcome-ada     done             mail.send      once                            2026-12-01T09:00:30Z  1     -      -",
          "import-legacy   failed           legacy.import  once                            2026-12-01T09:00:11Z  2     -      -",
          "6 tasks",
        ])
      }),
    ),
  )

  it.effect("--json prints the page: the tasks, how many matched, and the limit", () =>
    withSeeded((file) =>
      Effect.gen(function* () {
        const page = json<StoreAdmin.TaskPage>(yield* tickwork("tasks", "--store", file, "--json"))
        expect(page.total).toBe(6)
        expect(page.limit).toBe(50)
        expect(page.tasks.map((t) => [t.id, t.state])).toEqual([
          ["sync-crm", "scheduled"],
          ["cleanup", "paused"],
          ["nightly-report", "scheduled"],
          ["old-export", "cancelled"],
          ["welcome-ada", "done"],
          ["import-legacy", "failed"],
        ])
        const sync = page.tasks[0]
        expect(sync).toMatchObject({
          handler: "crm.sync",
          kind: "fixed-rate",
          payload: { account: "acme" },
          runNumber: 4,
          scheduledFor: T0 + 240_000,
          leaseOwner: null,
          tags: [],
        })
      }),
    ),
  )

  it.effect("--state, --handler and --limit filter and bound the list", () =>
    withSeeded((file) =>
      Effect.gen(function* () {
        const ids = (out: Outcome) => json<StoreAdmin.TaskPage>(out).tasks.map((t) => t.id)
        expect(
          ids(yield* tickwork("tasks", "--store", file, "--state", "paused", "--json")),
        ).toEqual(["cleanup"])
        expect(
          ids(yield* tickwork("tasks", "--store", file, "--handler", "mail.send", "--json")),
        ).toEqual(["old-export", "welcome-ada"])
        const limited = yield* tickwork("tasks", "--store", file, "--limit", "2")
        expect(lines(limited)).toHaveLength(4)
        expect(lines(limited)[3]).toBe("2 of 6 tasks (--limit 2)")
        const page = json<StoreAdmin.TaskPage>(
          yield* tickwork("tasks", "--store", file, "--limit", "2", "--json"),
        )
        expect([page.tasks.length, page.total, page.limit]).toEqual([2, 6, 2])
        const none = yield* tickwork("tasks", "--store", file, "--state", "running")
        expect(none.stdout).toBe("no tasks match")
      }),
    ),
  )

  it.effect("a bad --state, --limit or --tag is a typed error naming the field and value", () =>
    withSeeded((file) =>
      Effect.gen(function* () {
        const state = yield* tickwork("tasks", "--store", file, "--state", "sleeping")
        expect(typedError(state)).toMatchObject({
          _tag: "InvalidOption",
          field: "state",
          value: "sleeping",
        })
        expect(state.stderr).toContain(
          'state must be one of scheduled, running, paused, done, failed, cancelled, got "sleeping"',
        )
        expect(state.stdout).toBe("")
        const limit = yield* tickwork("tasks", "--store", file, "--limit", "0")
        expect(typedError(limit)).toMatchObject({ field: "limit", value: "0" })
        expect(limit.stderr).toContain('limit must be a whole number from 1 to 10000, got "0"')
        const tag = yield* tickwork("tasks", "--store", file, "--tag", "")
        expect(typedError(tag)).toMatchObject({ field: "tag", value: "" })
        expect(tag.stderr).toContain("tag must not be empty")
      }),
    ),
  )

  it.effect("--tag lists the tasks carrying the tag: stores of this version keep tags", () =>
    Effect.gen(function* () {
      const t = tempStore()
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { durable: d } = yield* DurableScheduler.make({
            handlers: [...handlers],
            owner: "worker-a",
            claim: false,
          })
          yield* d.schedule({
            id: "newsletter",
            handler: "mail.send",
            payload: { to: "list@example.com" },
            schedule: Schedule.once(3_600_000),
            tags: ["mail", "weekly"],
          })
          yield* d.schedule({
            id: "sync-crm",
            handler: "crm.sync",
            payload: { account: "acme" },
            schedule: Schedule.fixedRate(60_000),
            tags: ["crm"],
          })
        }),
      ).pipe(Effect.provide(sqlite(t.file)))
      const page = json<StoreAdmin.TaskPage>(
        yield* tickwork("tasks", "--store", t.file, "--tag", "mail", "--json"),
      )
      expect(page.tasks.map((task) => [task.id, task.tags])).toEqual([
        ["newsletter", ["mail", "weekly"]],
      ])
      const table = yield* tickwork("tasks", "--store", t.file, "--tag", "crm")
      expect(table.code).toBe(0)
      expect(lines(table).map((l) => l.split(/\s+/)[0])).toEqual(["ID", "sync-crm", "1"])
      expect(lines(table)[1]?.trimEnd().endsWith(" crm")).toBe(true)
      t.cleanup()
    }),
  )

  it("a table cell shows a line break escaped; a whole output keeps its lines", () => {
    expect(table([["id", "a\nb\tc"]])).toBe("id  a\\nb\\tc")
    expect(printable("one\ntwo\u001b", true)).toBe("one\ntwo\\x1b")
    expect(printableJson(JSON.stringify({ id: "\u009b\u001b" }))).toBe('{"id":"\\u009b\\u001b"}')
  })
})

describe("status and ledger (SQLite)", () => {
  it.effect("status shows one task field by field, or as JSON", () =>
    withSeeded((file) =>
      Effect.gen(function* () {
        const out = yield* tickwork("status", "cleanup", "--store", file)
        expect(out.code).toBe(0)
        expect(lines(out)).toEqual([
          "id                 cleanup",
          "state              paused (manual)",
          "handler            crm.sync",
          "schedule           every 5m after end",
          "priority           normal",
          "missed runs        catch-up",
          "slot               2026-12-01T09:05:00Z",
          "due                2026-12-01T09:05:00Z",
          "attempt            1",
          "runs               1",
          "failures in a row  0",
          "lease owner        -",
          "lease until        -",
          "tags               -",
          "generation         1",
          "created            2026-12-01T09:00:00Z",
          "updated            2026-12-01T09:03:00Z",
          "finished           -",
          "last failure       -",
          'payload            {"account":"all"}',
        ])
        // A cron task says what its expression means; other kinds have no such line.
        const cron = lines(yield* tickwork("status", "nightly-report", "--store", file))
        expect(cron.slice(3, 5)).toEqual([
          'schedule           cron "0 2 * * *" Europe/Berlin',
          "in words           at 02:00",
        ])
        expect(lines(out).some((l) => l.startsWith("in words"))).toBe(false)
        const info = json<StoreAdmin.TaskDetails>(
          yield* tickwork("status", "import-legacy", "--store", file, "--json"),
        )
        expect(info).toMatchObject({
          id: "import-legacy",
          state: "failed",
          // The attempt that ran last (SPEC §6.9): its first retry.
          attempt: 2,
          runNumber: 2,
          lastError: '"upstream answered 503"',
          finishedAt: T0 + 11_000,
        })
      }),
    ),
  )

  it.effect("ledger shows a task's runs and events, oldest first", () =>
    withSeeded((file) =>
      Effect.gen(function* () {
        const out = yield* tickwork("ledger", "import-legacy", "--store", file)
        expect(lines(out)).toEqual([
          "AT                    WHAT         SLOT                  ATTEMPT  LATE  OWNER     DETAIL",
          '2026-12-01T09:00:10Z  ran: failed  2026-12-01T09:00:10Z  1        0ms   worker-a  "upstream answered 503"',
          '2026-12-01T09:00:11Z  ran: failed  2026-12-01T09:00:10Z  2        0ms   worker-a  "upstream answered 503"',
        ])
        const cleanup = yield* tickwork("ledger", "cleanup", "--store", file)
        expect(lines(cleanup)[2]).toBe(
          "2026-12-01T09:03:00Z  paused          2026-12-01T09:05:00Z  -        -     -         manual",
        )
        const entries = json<ReadonlyArray<DurableScheduler.DurableOccurrence>>(
          yield* tickwork("ledger", "sync-crm", "--store", file, "--json"),
        )
        expect(entries.map((e) => [e.kind, e.kind === "ran" ? e.slot : e.firstSlot])).toEqual([
          ["ran", T0],
          ["ran", T0 + 60_000],
          ["ran", T0 + 120_000],
          ["ran", T0 + 180_000],
        ])
        const latest = json<ReadonlyArray<DurableScheduler.DurableOccurrence>>(
          yield* tickwork("ledger", "sync-crm", "--store", file, "--limit", "1", "--json"),
        )
        expect(latest).toEqual([entries[3]])
        const cut = yield* tickwork("ledger", "sync-crm", "--store", file, "--limit", "2")
        expect(lines(cut).slice(1)).toEqual([
          "2026-12-01T09:02:00Z  ran: succeeded  2026-12-01T09:02:00Z  1        0ms   worker-a  next 2026-12-01T09:03:00Z",
          "2026-12-01T09:03:00Z  ran: succeeded  2026-12-01T09:03:00Z  1        0ms   worker-a  next 2026-12-01T09:04:00Z",
          "the latest 2 entries (--limit to see more)",
        ])
        const bad = yield* tickwork("ledger", "sync-crm", "--store", file, "--limit", "-1")
        expect(typedError(bad)).toMatchObject({ field: "limit", value: "-1" })
      }),
    ),
  )

  it.effect("an unknown id is a typed error naming it, for every command that takes one", () =>
    withSeeded((file) =>
      Effect.gen(function* () {
        const before = sha(file)
        for (const command of ["status", "ledger"]) {
          const out = yield* tickwork(command, "no-such-task", "--store", file)
          expect(typedError(out)).toMatchObject({
            _tag: "UnknownTask",
            field: "id",
            value: "no-such-task",
          })
          expect(out.stderr).toContain('id "no-such-task" names no task in this store')
        }
        expect(sha(file)).toBe(before)
        const tasks = (yield* tickwork("tasks", "--store", file, "--json")).stdout
        for (const command of ["pause", "resume", "cancel"]) {
          const out = yield* tickwork(command, "no-such-task", "--store", file)
          expect(typedError(out)).toMatchObject({ _tag: "UnknownTask", value: "no-such-task" })
        }
        expect((yield* tickwork("tasks", "--store", file, "--json")).stdout).toBe(tasks)
      }),
    ),
  )
})

describe("ledger DETAIL", () => {
  const event = (detail: string): DurableScheduler.DurableOccurrence => ({
    taskId: "t",
    generation: 1,
    kind: "breaker",
    firstSlot: T0,
    lastSlot: T0,
    count: 1,
    cause: "open",
    at: T0,
    fence: null,
    owner: "worker-a",
    detail,
  })

  it("writes the instants of an event's detail in ISO 8601 UTC, like the other columns", () => {
    const out = ledgerTable([
      event(
        `closed -> open: slot ${T0} of task t failed; cool-down 60000 ms, half-open at ${T0 + 60_000}`,
      ),
      event("older than the catch-up window of 2592000000 ms"),
      event(`attempt 2 due at ${T0 + 1_500}; deadline ${T0 + 3_600_000}`),
    ]).split("\n")
    // DETAIL is the last column: the cause, ": ", then the detail.
    expect(out.slice(1).map((l) => l.slice(l.indexOf("open: ") + "open: ".length))).toEqual([
      "closed -> open: slot 2026-12-01T09:00:00Z of task t failed; cool-down 60000 ms, half-open at 2026-12-01T09:01:00Z",
      "older than the catch-up window of 2592000000 ms",
      "attempt 2 due at 2026-12-01T09:00:01.500Z; deadline 2026-12-01T10:00:00Z",
    ])
  })
})

describe("pause, resume and cancel (SQLite)", () => {
  it.effect("change the task as the scheduler's controls do, and report what they did", () =>
    withSeeded((file) =>
      Effect.gen(function* () {
        const paused = yield* tickwork("pause", "sync-crm", "--store", file)
        expect(paused.stdout).toBe('paused "sync-crm" (now paused (manual))')
        const again = yield* tickwork("pause", "sync-crm", "--store", file, "--json")
        expect(json(again)).toEqual({
          id: "sync-crm",
          changed: false,
          state: "paused",
          pausedReason: "manual",
        })
        // Three slots pass while it is paused: resume skips them (SPEC §15) and goes on at the
        // first slot at or after now.
        yield* TestClock.adjust(150_000)
        const resumed = yield* tickwork("resume", "sync-crm", "--store", file, "--json")
        expect(json(resumed)).toEqual({
          id: "sync-crm",
          changed: true,
          state: "scheduled",
          pausedReason: null,
        })
        const ledger = yield* tickwork("ledger", "sync-crm", "--store", file)
        // The slots of 09:04 and 09:05 passed while it was paused: skipped, never caught up; it
        // goes on at 09:06, the first slot at or after now (09:05:30).
        // Each event the command wrote says it came from the CLI.
        expect(lines(ledger).slice(6)).toEqual([
          "2026-12-01T09:05:30Z  skipped by cli  2026-12-01T09:04:00Z .. 2026-12-01T09:05:00Z (2)  -        -     -         paused: passed while paused; resumed at slot 2026-12-01T09:06:00Z",
          "2026-12-01T09:05:30Z  resumed by cli  2026-12-01T09:06:00Z                              -        -     -         manual: due at 2026-12-01T09:06:00Z",
        ])
        expect(
          lines(ledger).filter((l) => / paused by cli +2026-12-01T09:04:00Z .* manual$/.test(l)),
        ).toHaveLength(1)
        const status = json<StoreAdmin.TaskDetails>(
          yield* tickwork("status", "sync-crm", "--store", file, "--json"),
        )
        expect(status.scheduledFor).toBe(T0 + 360_000)

        const cancelled = yield* tickwork("cancel", "nightly-report", "--store", file)
        expect(cancelled.stdout).toBe('cancelled "nightly-report" (now cancelled)')
        const twice = yield* tickwork("cancel", "nightly-report", "--store", file)
        expect(twice.stdout).toBe('"nightly-report" was not cancelled: it is cancelled')
        expect(twice.code).toBe(0)
        const notPaused = yield* tickwork("resume", "welcome-ada", "--store", file)
        expect(notPaused.stdout).toBe('"welcome-ada" was not resumed: it is done')
      }),
    ),
  )

  it.effect("SPEC §19.2: resume of a failed task points at retry; retry schedules it now", () =>
    withSeeded((file) =>
      Effect.gen(function* () {
        const resumed = yield* tickwork("resume", "import-legacy", "--store", file)
        expect(resumed.stdout).toBe(
          '"import-legacy" was not resumed: it is failed; to run it again: tickwork retry "import-legacy"',
        )
        expect(resumed.code).toBe(0)
        const retried = yield* tickwork("retry", "import-legacy", "--store", file)
        expect(retried.stdout).toBe('retried "import-legacy": its failed slot runs again now')
        const status = json<StoreAdmin.TaskDetails>(
          yield* tickwork("status", "import-legacy", "--store", file, "--json"),
        )
        expect(status).toMatchObject({ state: "scheduled", attempt: 3 })
        const again = yield* tickwork("retry", "import-legacy", "--store", file, "--json")
        expect(json(again)).toEqual({
          id: "import-legacy",
          changed: false,
          state: "scheduled",
          pausedReason: null,
          refused:
            'cannot retry "import-legacy": it is scheduled; only a failed task can be retried: trigger it to run it now',
        })
        const notFailed = yield* tickwork("retry", "sync-crm", "--store", file)
        expect(notFailed.stdout).toBe(
          '"sync-crm" was not retried: it is scheduled; only a failed task can be retried',
        )
        const ledger = lines(yield* tickwork("ledger", "import-legacy", "--store", file))
        expect(ledger.filter((l) => l.includes("manual-retry by cli"))).toHaveLength(1)
        const missing = yield* tickwork("retry", "nope", "--store", file)
        expect(missing.code).toBe(1)
      }),
    ),
  )

  it.effect(
    "SPEC §19.7: retry --slot names a slot by ISO or ms; refusals say why; bad text is typed",
    () =>
      withSeeded((file) =>
        Effect.gen(function* () {
          const before = yield* tickwork("status", "sync-crm", "--store", file, "--json")
          // sync-crm's 09:01 slot ran and succeeded: not retried, and core's reason is given.
          const ok = yield* tickwork(
            "retry",
            "sync-crm",
            "--slot",
            "2026-12-01T09:01:00Z",
            "--store",
            file,
          )
          expect(ok.code).toBe(0)
          expect(ok.stdout).toBe(
            `not retried: cannot retry slot ${T0 + 60_000} of "sync-crm": its last run of slot ${T0 + 60_000} (attempt 1) succeeded: only a failed slot can be retried`,
          )
          const never = yield* tickwork(
            "retry",
            "sync-crm",
            "--slot",
            String(T0 + 30_000),
            "--store",
            file,
            "--json",
          )
          expect(json(never)).toMatchObject({ changed: false, state: "scheduled" })
          expect(json<{ refused: string }>(never).refused).toContain("has no run of slot")
          for (const bad of ["nope", "2026-12-01T09:01:00", "-5", "1.5"]) {
            const out = yield* tickwork("retry", "sync-crm", "--slot", bad, "--store", file)
            expect(typedError(out)).toMatchObject({
              _tag: "InvalidTime",
              field: "slot",
              value: bad,
            })
          }
          expect((yield* tickwork("status", "sync-crm", "--store", file, "--json")).stdout).toBe(
            before.stdout,
          )
          expect(Store.parseSlot("2026-12-01T10:01:00+01:00")).toBe(T0 + 60_000)
        }),
      ),
  )

  it.effect("SPEC §19.1: trigger runs a scheduled task now, once; a second waits refused", () =>
    withSeeded((file) =>
      Effect.gen(function* () {
        const before = json<StoreAdmin.TaskDetails>(
          yield* tickwork("status", "sync-crm", "--store", file, "--json"),
        )
        const triggered = yield* tickwork("trigger", "sync-crm", "--store", file)
        expect(triggered.stdout).toBe(
          'triggered "sync-crm": it runs once now; its next run stays as it was',
        )
        const during = json<StoreAdmin.TaskDetails>(
          yield* tickwork("status", "sync-crm", "--store", file, "--json"),
        )
        // The manual run is the pending one now (attempt 1, due at the trigger's instant).
        expect(during).toMatchObject({ state: "scheduled", attempt: 1 })
        expect(during.slot).not.toBe(before.slot)
        const again = yield* tickwork("trigger", "sync-crm", "--store", file, "--json")
        expect(json(again)).toEqual({
          id: "sync-crm",
          changed: false,
          state: "scheduled",
          pausedReason: null,
          refused:
            'cannot trigger "sync-crm": it is scheduled; a manual run of it is already waiting to start',
        })
        const waiting = yield* tickwork("trigger", "sync-crm", "--store", file)
        expect(waiting.stdout).toBe(
          '"sync-crm" was not triggered: a manual run of it is already waiting to start',
        )
        const paused = yield* tickwork("trigger", "cleanup", "--store", file)
        expect(paused.stdout).toBe(
          '"cleanup" was not triggered: it is paused (manual); only a scheduled task can be triggered',
        )
        const failed = yield* tickwork("trigger", "import-legacy", "--store", file)
        expect(failed.stdout).toContain("only a scheduled task can be triggered")
        const ledger = lines(yield* tickwork("ledger", "sync-crm", "--store", file))
        expect(ledger.filter((l) => l.includes("manual-trigger by cli"))).toHaveLength(1)
        const missing = yield* tickwork("trigger", "nope", "--store", file)
        expect(missing.code).toBe(1)
      }),
    ),
  )

  it.effect("reading commands change nothing and run nothing, even with work overdue", () =>
    withSeeded((file) =>
      Effect.gen(function* () {
        // sync-crm was due at 09:04; it is now 09:10 and no worker runs.
        yield* TestClock.adjust(420_000)
        const before = sha(file)
        for (const args of [["tasks"], ["status", "sync-crm"], ["ledger", "sync-crm"], ["stats"]]) {
          expect((yield* tickwork(...args, "--store", file)).code).toBe(0)
        }
        expect(sha(file)).toBe(before)
        const stats = json<StoreAdmin.StoreStats>(
          yield* tickwork("stats", "--store", file, "--json"),
        )
        expect(stats.overdue).toBe(1)
        expect(stats.oldestDueAt).toBe(T0 + 240_000)
        // Due for 6 minutes and no run ended since 09:03: the store shows a stalled fleet.
        expect(stats.health).toMatchObject({ status: "unhealthy", reasons: [{ code: "stalled" }] })
        expect((yield* tickwork("stats", "--store", file)).stdout).toContain(
          "health    unhealthy: stalled (work due for 360000 ms and no run started for 360000 ms",
        )
        const sync = json<StoreAdmin.TaskDetails>(
          yield* tickwork("status", "sync-crm", "--store", file, "--json"),
        )
        expect([sync.state, sync.runNumber]).toEqual(["scheduled", 4])
      }),
    ),
  )
})

describe("stats (SQLite)", () => {
  it.effect("shows tasks by state, overdue work, lateness and the processes seen", () =>
    withSeeded((file) =>
      Effect.gen(function* () {
        const out = yield* tickwork("stats", "--store", file)
        expect(lines(out)).toEqual([
          `store     sqlite ${file}`,
          "at        2026-12-01T09:03:00Z",
          "tasks     6: 2 scheduled, 0 running, 1 paused, 1 done, 1 failed, 1 cancelled",
          "overdue   0",
          "lateness  p50 0ms  p90 0ms  p99 0ms  max 0ms  (last 8 runs)",
          "health    ok",
          "",
          "OWNER     RUNNING  LEASE UNTIL  RUNS (10m)  LAST RUN ENDED",
          "worker-a  0        -            8           2026-12-01T09:03:00Z",
        ])
        const stats = json<StoreAdmin.StoreStats>(
          yield* tickwork("stats", "--store", file, "--json"),
        )
        expect(stats).toMatchObject({
          store: "sqlite",
          target: file,
          at: T0 + 180_000,
          total: 6,
          tasks: { scheduled: 2, running: 0, paused: 1, done: 1, failed: 1, cancelled: 1 },
          overdue: 0,
          oldestDueAt: null,
          lateness: { runs: 8, p50: 0, p90: 0, p99: 0, max: 0 },
          owners: [
            {
              owner: "worker-a",
              running: 0,
              leaseExpiresAt: null,
              completed: 8,
              lastFinishedAt: T0 + 180_000,
            },
          ],
        })
      }),
    ),
  )
})

describe("bad stores", () => {
  it.effect("another URL scheme, a URL without a host, an empty name: InvalidOption on store", () =>
    Effect.gen(function* () {
      for (const [store, words] of [
        [
          "mysql://db.internal/tasks",
          'must be a SQLite file path or a postgres:// URL, got "mysql://db.internal/tasks"',
        ],
        ["postgres://", 'must be a postgres:// URL naming a host, got "postgres://"'],
        ["", 'must be a SQLite file path or a postgres:// URL, got ""'],
      ] as const) {
        const out = yield* tickwork("tasks", "--store", store)
        expect(typedError(out)).toMatchObject({
          _tag: "InvalidOption",
          field: "store",
          value: store,
        })
        expect(out.stderr).toContain(`store ${words}`)
      }
      // A password in the URL is never shown.
      const secret = yield* tickwork("stats", "--store", "mysql://ops:hunter2@db/x")
      expect(secret.stderr).toContain('"mysql://ops:***@db/x"')
      expect(secret.stderr).not.toContain("hunter2")
    }),
  )

  it.effect("a missing file is not created, and a file no scheduler used is refused", () =>
    Effect.gen(function* () {
      const t = tempStore()
      const missing = yield* tickwork("tasks", "--store", t.file)
      expect(typedError(missing)).toMatchObject({ field: "store", value: t.file })
      expect(missing.stderr).toContain("store must be an existing SQLite file or a postgres:// URL")
      expect(existsSync(t.file)).toBe(false)
      writeFileSync(t.file, "")
      const empty = yield* tickwork("pause", "x", "--store", t.file)
      expect(typedError(empty)).toMatchObject({ field: "store", value: t.file })
      expect(empty.stderr).toContain("it has no tickwork_tasks table")
      expect(readFileSync(t.file).length).toBe(0)
      t.cleanup()
    }),
  )

  it.effect("a SQLite file a scheduler holds exclusively is StoreLocked, saying what to do", () =>
    Effect.gen(function* () {
      const t = tempStore()
      yield* seed(sqlite(t.file), { run: true })
      // The default store layer locks the file for its process, as a running worker does.
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* Layer.build(sqlite(t.file))
          const out = yield* tickwork("pause", "sync-crm", "--store", t.file)
          expect(typedError(out)).toMatchObject({ _tag: "StoreLocked", filename: t.file })
          expect(out.stderr).toContain("is locked by another process")
          expect(out.stderr).toContain("exclusive: false")
        }),
      )
      const after = json<StoreAdmin.TaskDetails>(
        yield* tickwork("status", "sync-crm", "--store", t.file, "--json"),
      )
      expect(after.state).toBe("scheduled")
      t.cleanup()
    }),
  )

  it("a table cell shows a line break escaped; a whole output keeps its lines", () => {
    expect(table([["id", "a\nb\tc"]])).toBe("id  a\\nb\\tc")
    expect(printable("one\ntwo\u001b", true)).toBe("one\ntwo\\x1b")
    expect(printableJson(JSON.stringify({ id: "\u009b\u001b" }))).toBe('{"id":"\\u009b\\u001b"}')
  })
})

describe("PostgreSQL", () => {
  let db: { url: string; drop: () => Promise<void> }
  beforeAll(async () => {
    db = await freshDatabase()
    await Effect.runPromise(seed(postgres(db.url), { run: false }))
  }, 120_000)
  afterAll(() => db?.drop(), 60_000)

  it.live(
    "tasks, status, ledger and stats read the shared store, as tables and as JSON",
    () =>
      Effect.gen(function* () {
        const out = yield* tickwork("tasks", "--store", db.url)
        expect(out.code).toBe(0)
        const rows = lines(out)
        expect(rows[0]).toMatch(/^ID {14}STATE {12}HANDLER {8}SCHEDULE/)
        // Live tasks in due order (sync-crm and cleanup are due at once), then finished ones.
        expect(rows.map((r) => r.split(/\s+/)[0])).toEqual([
          "ID",
          "sync-crm",
          "cleanup",
          "import-legacy",
          "welcome-ada",
          "nightly-report",
          "old-export",
          "6",
        ])
        expect(rows[2]).toMatch(/^cleanup +paused \(manual\) +crm\.sync +every 5m after end/)
        const page = json<StoreAdmin.TaskPage>(
          yield* tickwork("tasks", "--store", db.url, "--json"),
        )
        expect(page.total).toBe(6)
        const paused = json<StoreAdmin.TaskPage>(
          yield* tickwork("tasks", "--store", db.url, "--state", "cancelled", "--json"),
        )
        expect(paused.tasks.map((t) => t.id)).toEqual(["old-export"])

        const status = yield* tickwork("status", "cleanup", "--store", db.url)
        expect(lines(status)[1]).toBe("state              paused (manual)")
        const ledger = json<ReadonlyArray<DurableScheduler.DurableOccurrence>>(
          yield* tickwork("ledger", "old-export", "--store", db.url, "--json"),
        )
        expect(ledger.map((e) => [e.kind, e.kind === "ran" ? null : e.cause])).toEqual([
          ["cancelled", "scheduled"],
        ])
        const stats = json<StoreAdmin.StoreStats>(
          yield* tickwork("stats", "--store", db.url, "--json"),
        )
        expect(stats).toMatchObject({
          store: "postgres",
          total: 6,
          tasks: { scheduled: 4, running: 0, paused: 1, done: 0, failed: 0, cancelled: 1 },
          owners: [],
          lateness: { runs: 0, p50: null },
        })
        expect(stats.target).toMatch(/^127\.0\.0\.1:\d+\/t_/)
        const text = yield* tickwork("stats", "--store", db.url)
        expect(lines(text)[2]).toBe(
          "tasks     6: 4 scheduled, 0 running, 1 paused, 0 done, 0 failed, 1 cancelled",
        )
        expect(text.stdout).toContain("no process holds a lease or ran a task in the last 10m")
      }),
    120_000,
  )

  it.live(
    "pause, resume and cancel write through the scheduler's controls",
    () =>
      Effect.gen(function* () {
        expect((yield* tickwork("pause", "nightly-report", "--store", db.url)).stdout).toBe(
          'paused "nightly-report" (now paused (manual))',
        )
        const resumed = json<StoreAdmin.ControlResult>(
          yield* tickwork("resume", "nightly-report", "--store", db.url, "--json"),
        )
        expect(resumed).toEqual({
          id: "nightly-report",
          changed: true,
          state: "scheduled",
          pausedReason: null,
        })
        const ledger = json<ReadonlyArray<DurableScheduler.DurableOccurrence>>(
          yield* tickwork("ledger", "nightly-report", "--store", db.url, "--json"),
        )
        expect(ledger.map((e) => e.kind)).toEqual(["paused", "resumed"])
        const cancelled = json<StoreAdmin.ControlResult>(
          yield* tickwork("cancel", "welcome-ada", "--store", db.url, "--json"),
        )
        expect(cancelled).toMatchObject({ changed: true, state: "cancelled" })
        const unknown = yield* tickwork("pause", "nope", "--store", db.url)
        expect(typedError(unknown)).toMatchObject({
          _tag: "UnknownTask",
          field: "id",
          value: "nope",
        })
        const bad = yield* tickwork("tasks", "--store", db.url, "--state", "Paused")
        expect(typedError(bad)).toMatchObject({ field: "state", value: "Paused" })
      }),
    120_000,
  )

  it.live(
    "a database that does not exist is StoreUnavailable naming the server; one no scheduler used is refused",
    () =>
      Effect.gen(function* () {
        const missing = new URL(db.url)
        missing.pathname = "/no_such_database"
        const out = yield* tickwork("tasks", "--store", missing.toString())
        expect(typedError(out)).toMatchObject({
          _tag: "StoreUnavailable",
          store: "postgres",
          reason: "unknown-database",
        })
        expect(out.stderr).toContain("/no_such_database: the database does not exist")
        const empty = yield* Effect.promise(() => freshDatabase())
        const refused = yield* tickwork("stats", "--store", empty.url)
        expect(typedError(refused)).toMatchObject({ _tag: "InvalidOption", field: "store" })
        expect(refused.stderr).toContain("it has no tickwork_tasks table")
        yield* Effect.promise(() => empty.drop())
      }),
    120_000,
  )
})

describe("control characters in stored fields (issue 28)", () => {
  /** An id that would retitle the terminal, with C1 CSI, DEL and a bidirectional override. */
  const EVIL = "evil\u001b]0;pwned\u0007\u009b31m\u007f\u202e"
  const SHOWN = "evil\\x1b]0;pwned\\x07\\x9b31m\\x7f\\u202e"
  /** Any character a terminal could take as a command: C0 but a line feed, DEL, C1, bidi. */
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

  it.effect("every human-readable output shows them escaped; --json escapes them too", () =>
    Effect.gen(function* () {
      const t = tempStore()
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* TestClock.setTime(T0)
          const { durable: d } = yield* DurableScheduler.make({
            handlers: [...handlers],
            owner: `worker\u001b[2J`,
          })
          yield* d.schedule({
            id: EVIL,
            handler: "legacy.import",
            payload: {},
            schedule: Schedule.once(0),
            tags: [`tag\u001b[31m`],
          })
          for (let k = 0; k < 10_000 && !(yield* d.idle); k++) yield* Effect.yieldNow
          yield* TestClock.adjust(1_000)
          for (let k = 0; k < 10_000 && !(yield* d.idle); k++) yield* Effect.yieldNow
        }),
      ).pipe(Effect.provide(sqlite(t.file)))
      const outputs = [
        yield* tickwork("tasks", "--store", t.file),
        yield* tickwork("status", EVIL, "--store", t.file),
        yield* tickwork("ledger", EVIL, "--store", t.file),
        yield* tickwork("stats", "--store", t.file),
        yield* tickwork("pause", EVIL, "--store", t.file),
        yield* tickwork("status", `${EVIL}-unknown`, "--store", t.file),
      ]
      for (const out of outputs) {
        expect(RAW.test(out.stdout), out.stdout).toBe(false)
        expect(RAW.test(out.stderr), out.stderr).toBe(false)
      }
      const [tasks, status, ledger, stats, pause, unknown] = outputs
      expect(tasks?.stdout).toContain(SHOWN)
      expect(tasks?.stdout).toContain("tag\\x1b[31m")
      expect(status?.stdout).toContain(`id                 ${SHOWN}`)
      expect(ledger?.stdout).toContain("worker\\x1b[2J")
      expect(stats?.stdout).toContain("worker\\x1b[2J")
      expect(pause?.stdout).toContain("evil\\u001b]0;pwned\\u0007\\x9b31m\\x7f\\u202e")
      expect(unknown?.code).toBe(1)
      const json = yield* tickwork("status", EVIL, "--store", t.file, "--json")
      expect(RAW.test(json.stdout)).toBe(false)
      expect(JSON.parse(json.stdout).id).toBe(EVIL)
      t.cleanup()
    }),
  )

  it("a table cell shows a line break escaped; a whole output keeps its lines", () => {
    expect(table([["id", "a\nb\tc"]])).toBe("id  a\\nb\\tc")
    expect(printable("one\ntwo\u001b", true)).toBe("one\ntwo\\x1b")
    expect(printableJson(JSON.stringify({ id: "\u009b\u001b" }))).toBe('{"id":"\\u009b\\u001b"}')
  })
})

describe("a cron task read with dayMatch either (issue 23)", () => {
  it("status says either day field, and the words say `or on`", () => {
    const schedule = {
      kind: "cron",
      expression: "0 16 */2 * sat",
      timeZone: "UTC",
      dayMatch: "either",
    } as const
    expect(Store.scheduleText(schedule)).toBe('cron "0 16 */2 * sat" UTC, either day field')
    expect(Store.scheduleWords(schedule)).toMatch(/of the month, or on Saturday$/)
    const vixie = { kind: "cron", expression: "0 16 */2 * sat", timeZone: "UTC" } as const
    expect(Store.scheduleWords(vixie)).toMatch(/of the month, if it is also Saturday$/)
    expect(Store.scheduleWords({ kind: "fixed-delay", period: 1_000 })).toBeUndefined()
  })
})
