import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { describe, expect, it } from "@effect/vitest"
import { Options, Schedule } from "@tickwork/core"
import { Effect, Exit, Layer, Schema } from "effect"
import { type DurableScheduler, Handler, Postgres, Sqlite } from "../src/index.ts"
import { repoRoot, tsxArgs } from "./children.ts"
import { recording, sqlite, tempDir, withScheduler } from "./helpers.ts"

const Email = Schema.Struct({
  to: Schema.String.check(Schema.isPattern(/^[^@\s]+@[^@\s]+$/)),
  items: Schema.Array(Schema.Struct({ sku: Schema.String, qty: Schema.Int })),
})
const email = Handler.make("email.send", Email, () => Effect.void)

describe("bad input: each a typed error naming the field and value; nothing written", () => {
  it.effect(
    "unknown handler, payload failing its schema, custom schedule, core option errors",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const store = sqlite(t.file())
        const { handler } = recording()
        yield* withScheduler(store, { handlers: [email, handler] }, (d) =>
          Effect.gen(function* () {
            const before = yield* d.stats
            const ok = {
              handler: email,
              payload: { to: "a@b.c", items: [] },
              schedule: Schedule.once(10),
            }

            const unknown = yield* Effect.flip(
              d.schedule({ ...ok, handler: "sms.send", payload: {} }),
            )
            expect(unknown).toMatchObject({
              _tag: "UnknownHandler",
              field: "handler",
              value: "sms.send",
            })
            expect(unknown.message).toBe(
              'handler "sms.send" is not registered with this scheduler (registered: "email.send", "record")',
            )
            const other = Handler.make("other", Schema.Unknown, () => Effect.void)
            const unregistered = yield* Effect.flip(
              d.schedule({ ...ok, handler: other, payload: 1 }),
            )
            expect(unregistered._tag).toBe("UnknownHandler")

            const badTo = yield* Effect.flip(
              d.schedule({ ...ok, payload: { to: "nobody", items: [] } }),
            )
            expect(badTo).toMatchObject({
              _tag: "InvalidPayload",
              field: "payload.to",
              value: "nobody",
              handler: "email.send",
            })
            expect(badTo.message).toContain(
              'payload.to does not match the schema of handler "email.send"',
            )
            expect(badTo.message).toContain('got "nobody"')
            const badQty = yield* Effect.flip(
              d.schedule({ ...ok, payload: { to: "a@b.c", items: [{ sku: "x", qty: 1.5 }] } }),
            )
            expect(badQty).toMatchObject({ field: "payload.items[0].qty", value: 1.5 })
            const notObject = yield* Effect.flip(d.schedule({ ...ok, payload: "hello" as never }))
            expect(notObject).toMatchObject({
              _tag: "InvalidPayload",
              field: "payload",
              value: "hello",
            })

            const custom = yield* Effect.flip(
              d.schedule({
                ...ok,
                schedule: Schedule.custom((s) => (s === undefined ? 1 : undefined)),
              }),
            )
            expect(custom).toMatchObject({ _tag: "NotDurable", field: "schedule" })
            expect(custom.message).toContain("cannot be stored")

            const cases = [
              [{ ...ok, schedule: Schedule.fixedRate(0) }, "InvalidPeriod", "period"],
              [{ ...ok, schedule: Schedule.once(-5) }, "InvalidDelay", "delay"],
              [{ ...ok, schedule: Schedule.at(1.5) }, "InvalidTime", "time"],
              [
                { ...ok, schedule: Schedule.cron("61 * * * *") },
                "InvalidCronExpression",
                "expression",
              ],
              [
                { ...ok, schedule: Schedule.cron("0 * * * *", { timeZone: "Mars/Base" }) },
                "InvalidTimeZone",
                "timeZone",
              ],
              [{ ...ok, priority: "urgent" }, "InvalidPriority", "priority"],
              [{ ...ok, retry: { maxRetries: -1 } }, "InvalidRetryPolicy", "retry.maxRetries"],
              [{ ...ok, missedRuns: "later" }, "InvalidOption", "missedRuns"],
              [{ ...ok, timeout: 0.5 }, "InvalidOption", "timeout"],
              [{ ...ok, id: "" }, "InvalidOption", "id"],
              // SPEC §13: a key the scheduler does not know is never silently ignored.
              [{ ...ok, missedRun: "skip" }, "InvalidOption", "missedRun"],
              // SPEC §3, §7, §15: the per-task controls are checked by the core's rules.
              [{ ...ok, window: -5 }, "InvalidOption", "window"],
              [{ ...ok, schedule: Schedule.fixedDelay(10), window: 5 }, "InvalidOption", "window"],
              [{ ...ok, tags: ["a", ""] }, "InvalidOption", "tags[1]"],
              [{ ...ok, tags: "a" }, "InvalidOption", "tags"],
              [{ ...ok, breaker: "nope" }, "InvalidOption", "breaker"],
              [
                { ...ok, breaker: { failures: 0, coolDown: 10 } },
                "InvalidOption",
                "breaker.failures",
              ],
            ] as const
            for (const [options, tag, field] of cases) {
              const e = yield* Effect.flip(d.schedule(options as never))
              expect({ tag: e._tag, field: (e as { field?: string }).field }).toEqual({
                tag,
                field,
              })
              expect(e.message).toContain(field)
            }
            expect((yield* d.stats).tasks).toEqual(before.tasks)
          }),
        )
        t.cleanup()
      }),
  )

  it.effect("a payload whose encoded form is not JSON is rejected at schedule time", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const big = Handler.make("big", Schema.Struct({ n: Schema.BigInt }), () => Effect.void)
      yield* withScheduler(sqlite(t.file()), { handlers: [big] }, (d) =>
        Effect.gen(function* () {
          const e = yield* Effect.flip(
            d.schedule({ handler: big, payload: { n: 5n }, schedule: Schedule.once(1) }),
          )
          expect(e).toMatchObject({ _tag: "InvalidPayload", field: "payload.n", handler: "big" })
          expect(e.message).toContain("cannot be stored")
          expect((yield* d.stats).tasks.scheduled).toBe(0)
        }),
      )
      t.cleanup()
    }),
  )

  // Issue 28, item 6: under Schema.Unknown a Date was stored as a string, a function dropped.
  it.effect("a payload that JSON would change is refused with InvalidPayload naming it", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const any = Handler.make("any", Schema.Unknown, () => Effect.void)
      const dated = Handler.make(
        "dated",
        Schema.Struct({ at: Schema.DateFromString }),
        () => Effect.void,
      )
      class Point {
        readonly x = 1
      }
      yield* withScheduler(sqlite(t.file()), { handlers: [any, dated] }, (d) =>
        Effect.gen(function* () {
          for (const [payload, field] of [
            [{ when: new Date(0) }, "payload.when"],
            [new Date(0), "payload"],
            [{ run: () => 1 }, "payload.run"],
            [{ n: Number.NaN }, "payload.n"],
            [{ list: [1, undefined] }, "payload.list[1]"],
            [{ m: new Map([["a", 1]]) }, "payload.m"],
            [{ deep: { p: new Point() } }, "payload.deep.p"],
          ] as const) {
            const e = yield* Effect.flip(
              d.schedule({ handler: any, payload, schedule: Schedule.once(1) }),
            )
            expect(e).toMatchObject({ _tag: "InvalidPayload", field, handler: "any" })
            expect(e.message).toContain("does not survive JSON")
          }
          expect((yield* d.stats).tasks.scheduled).toBe(0)
          // What JSON keeps is accepted: an undefined property reads back as the same absence.
          yield* d.schedule({
            handler: any,
            payload: { a: undefined, b: [1, "x", null, { c: true }], e: Object.create(null) },
            schedule: Schedule.once(1),
          })
          // A schema that encodes a Date to JSON stores it.
          yield* d.schedule({
            handler: dated,
            payload: { at: new Date(0) },
            schedule: Schedule.once(1),
          })
          expect((yield* d.stats).tasks.scheduled).toBe(2)
        }),
      )
      t.cleanup()
    }),
  )

  it.effect(
    "a bad deduplication key (SPEC §20.3): InvalidOption naming dedup.mode, nothing written",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const { handler } = recording()
        yield* withScheduler(sqlite(t.file()), { handlers: [handler] }, (d) =>
          Effect.gen(function* () {
            const options = {
              handler,
              payload: { n: 1 },
              schedule: Schedule.once(10),
              dedup: { key: "k", mode: "queue" },
            }
            const error = yield* Effect.flip(
              d.schedule(options as unknown as Parameters<typeof d.schedule>[0]),
            )
            expect(error).toMatchObject({
              _tag: "InvalidOption",
              field: "dedup.mode",
              value: "queue",
            })
            expect((yield* d.stats).tasks.scheduled).toBe(0)
          }),
        )
        t.cleanup()
      }),
  )

  it.effect("a closed scheduler rejects new tasks with SchedulerClosed", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const { handler } = recording()
      const kept = yield* withScheduler(sqlite(t.file()), { handlers: [handler] }, (d) =>
        Effect.succeed(d),
      )
      const e = yield* Effect.flip(
        kept.schedule({ handler, payload: { n: 1 }, schedule: Schedule.once(1) }),
      )
      expect(e._tag).toBe("SchedulerClosed")
      t.cleanup()
    }),
  )

  it.effect("bad layer options are InvalidOption naming the option", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const { handler } = recording()
      for (const [options, field] of [
        [{ handlers: [handler, handler] }, "handlers"],
        [{ handlers: [handler], workers: 0 }, "workers"],
        [{ handlers: [handler], lease: 0 }, "lease"],
        [{ handlers: [handler], catchUpWindow: -1 }, "catchUpWindow"],
        // SPEC §13: unknown keys of the layer's options and of a handler spec.
        [{ handlers: [handler], worker: 2 }, "worker"],
        [{ handlers: [{ ...handler, retries: 2 }] }, 'handlers["record"].retries'],
        // Issue 28, item 4: `workers: 5e6` ran out of memory (the pool's arrays).
        [{ handlers: [handler], workers: 5e6 }, "workers"],
        [{ handlers: [handler], workers: Options.bounds.workers.max + 1 }, "workers"],
        [{ handlers: [handler], claimBatch: Options.bounds.claimBatch.max + 1 }, "claimBatch"],
        [
          { handlers: [handler], streamCapacity: Options.bounds.streamCapacity.max + 1 },
          "streamCapacity",
        ],
      ] as const) {
        const exit = yield* withScheduler(
          sqlite(t.file()),
          options as DurableScheduler.DurableSchedulerOptions<typeof handler>,
          () => Effect.void,
        ).pipe(Effect.exit)
        expect(Exit.isFailure(exit)).toBe(true)
        const error = Exit.isFailure(exit)
          ? (exit.cause.reasons[0] as { error?: { field?: string } }).error
          : undefined
        expect(error?.field).toBe(field)
      }
      t.cleanup()
    }),
  )

  it.effect("every size-like option is accepted at its bound; a page past it is refused", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const { handler } = recording()
      yield* withScheduler(
        sqlite(t.file()),
        {
          handlers: [handler],
          workers: Options.bounds.workers.max,
          claimBatch: Options.bounds.claimBatch.max,
          streamCapacity: Options.bounds.streamCapacity.max,
        },
        (d) =>
          Effect.gen(function* () {
            yield* d.schedule({ id: "a", handler, payload: { n: 1 }, schedule: Schedule.once(10) })
            const max = Options.bounds.limit.max
            expect(yield* d.tasks({ limit: max })).toHaveLength(1)
            const error = yield* Effect.flip(d.tasks({ limit: max + 1 }))
            expect(error).toMatchObject({ _tag: "InvalidOption", field: "limit", value: max + 1 })
          }),
      )
      t.cleanup()
    }),
  )

  it.live(
    "a store file held by another process is StoreLocked; a bad file is StoreUnavailable",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const file = t.file()
        const child = spawn(
          process.execPath,
          [...tsxArgs, join(repoRoot, "packages/durable/test/fixtures/hold.ts"), file],
          {
            cwd: repoRoot,
            stdio: ["pipe", "pipe", "inherit"],
          },
        )
        yield* Effect.promise(
          () =>
            new Promise<void>((resolve, reject) => {
              const lines = createInterface({ input: child.stdout })
              lines.on("line", (line) => line === "holding" && resolve())
              child.once("exit", (code) => reject(new Error(`holder exited ${code}`)))
            }),
        )
        const locked = yield* Effect.flip(
          Layer.build(Sqlite.layer({ filename: file })).pipe(Effect.scoped),
        )
        expect(locked).toMatchObject({ _tag: "StoreLocked", filename: file })
        expect(locked.message).toBe(
          `the SQLite store ${JSON.stringify(file)} is locked by another process (only one scheduler may open a store file)`,
        )
        child.kill("SIGKILL")
        yield* Effect.promise(() => new Promise((resolve) => child.once("exit", resolve)))
        // The OS drops the lock with the process: the file opens now.
        yield* Layer.build(Sqlite.layer({ filename: file })).pipe(Effect.scoped)

        const garbage = t.file("garbage.db")
        writeFileSync(
          garbage,
          "this is not a database, just forty-odd bytes of text....".repeat(100),
        )
        const notDb = yield* Effect.flip(
          Layer.build(Sqlite.layer({ filename: garbage })).pipe(Effect.scoped),
        )
        expect(notDb).toMatchObject({ _tag: "StoreUnavailable", store: "sqlite", target: garbage })
        expect(notDb.message).toContain("file is not a database")
        const noDir = join(t.dir, "missing", "tasks.db")
        const missing = yield* Effect.flip(
          Layer.build(Sqlite.layer({ filename: noDir })).pipe(Effect.scoped),
        )
        expect(missing).toMatchObject({ _tag: "StoreUnavailable", target: noDir })
        t.cleanup()
      }),
    // A child process starts under tsx: seconds on a busy machine.
    60_000,
  )

  it.live(
    "an unreachable PostgreSQL server is StoreUnavailable naming the server, not the password",
    () =>
      Effect.gen(function* () {
        const e = yield* Effect.flip(
          Layer.build(
            Postgres.layer({
              url: "postgres://app:s3cret@127.0.0.1:1/tasks",
              connectTimeout: "2 seconds",
            }),
          ).pipe(Effect.scoped),
        )
        expect(e).toMatchObject({
          _tag: "StoreUnavailable",
          store: "postgres",
          target: "127.0.0.1:1/tasks",
        })
        expect(e.message).toMatch(/^cannot use the PostgreSQL store at 127\.0\.0\.1:1\/tasks: /)
        expect(e.message).not.toContain("s3cret")
      }),
  )
})
